"""cuMBE on 1 and on 2 GPUs of one node, on graphs with >= 1e9 maximal bicliques (issue 18).

    python3 benchmarks/multi-gpu/bench.py --out DIR [--budget 470] [--parts hard,crown,parmbe]
    MGPU_TINY=1 python3 benchmarks/multi-gpu/bench.py --out DIR    # dry run: CUDA simulator

Run by ``run.sh`` (a machine with 2 GPUs).  What it does, within ``--budget`` seconds:

1. in parallel: compile the kernel into numba's cache (benchmarks/gpu/warm.py), generate the
   stand-ins (benchmarks/standins.py, ``-hard`` presets: ~1.5e9 bicliques each) and the crown
   graphs, start the GPU workers (cumbe.devices.DevicePool, one per GPU) and, in a process of
   its own, 16-process ParMBE, which counts the same graphs sharded the same way (shards
   i/n, n = the 2-GPU run's shard count) on the CPU while the GPUs work, each graph under a
   time limit;
2. phase 1, the two GPUs at once, each a 1-GPU run (devices=[0] or [1], one shard):
   GPU 0 the hard stand-ins in turn, GPU 1 the crown graph S_c (calibration), then S_33
   (2**33 - 2 bicliques > 2**32) if its predicted time fits the budget;
3. phase 2, both GPUs together (devices=all, 8 shards per device from one queue): the same
   graphs;
4. checks: every count and fingerprint equal across runs (and ParMBE's), the crown counts
   exactly 2**n - 2, and 2-GPU time <= 0.55 x 1-GPU time where one GPU takes >= 10 s.

Every run has a time limit from the budget left (a run past it is stopped: its workers are
killed and started again).  Writes DIR/results.jsonl (one line per run, as it goes),
DIR/parmbe.jsonl, DIR/results.md (the table) and prints progress.  Times: a run's time is
the wall time of its whole computation from the moment its devices were ready (graph
prepared, kernel loaded), cumbe.devices; the 1-GPU run is one kernel, so its time is that
kernel plus the run's host setup and copies.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for p in (str(REPO), str(REPO / "benchmarks")):
    if p not in sys.path:
        sys.path.insert(0, p)

# numba's first calls of the host code (preparation, task needs, shard partition), cached
HOST_WARM = ("import sys; sys.path[:0] = ['.', 'benchmarks']; import numpy as np, standins; "
             "from cumbe.engine import prepare_for, task_needs; "
             "from mbebench.shard import assign, assign_weighted; "
             "p = prepare_for(standins.crown(4)); task_needs(p, p.rs); assign(np.ones(3), 2); "
             "assign_weighted(np.ones(3), np.ones(2))")
from cumbe.spec import SHARDS_PER_DEVICE  # noqa: E402 - after the path

from bench_report import MIN_T1_S, TARGET, report  # noqa: E402 - beside this script
LOCK = threading.Lock()
T0 = time.time()


def log(*a) -> None:
    with LOCK:
        print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


class Budget:
    def __init__(self, seconds: float):
        self.end = T0 + seconds

    def left(self) -> float:
        return self.end - time.time()


# ------------------------------------------------------------------ configuration


def config(a) -> dict:
    """The graphs and engine parameters: the real run, or the simulator's tiny one."""
    if a.tiny:
        return {
            "hard": [("BookCrossing-hard", dict(scale=0.0002, blocks=dict(
                count=3, left_size=(5, 6), right_size=(5, 6), p=(0.75, 0.75), pool_left=30,
                pool_right=30))),
                     ("stackoverflow-hard", dict(scale=0.0002, blocks=dict(
                         count=2, left_size=(5, 5), right_size=(5, 5), p=(0.8, 0.8),
                         pool_left=20, pool_right=20)))],
            "crown": a.crown or 6, "crown_calib": a.crown_calib or 4,
            "params": dict(variant="cuMBE", threads=32, blocks=1, k=2),
            "parmbe": min(a.parmbe, 2), "caps": dict(hard=a.hard_cap, crown=a.crown_cap),
        }
    return {
        "hard": [(name, {}) for name in a.graphs.split(",") if name],
        "crown": a.crown or 33, "crown_calib": a.crown_calib or 28,
        "params": dict(variant="cuMBE", threads=128, blocks=0, k=24),
        "parmbe": a.parmbe, "caps": dict(hard=a.hard_cap, crown=a.crown_cap),
    }


def make_graphs(cfg: dict, gdir: Path, tiny: bool) -> dict:
    """name -> {"path", "kind", "expected" (crown), ...}; generation runs in subprocesses."""
    import standins

    from mbebench.csr import write_csr

    gdir.mkdir(parents=True, exist_ok=True)
    out, procs = {}, []
    for name, over in cfg["hard"]:
        if over:  # tiny: overrides, in this process (milliseconds)
            b = over.get("blocks")
            p = standins.preset_params(name, seed=1, scale=over["scale"],
                                       blocks=standins.Blocks(**b) if b else None)
            path, _ = standins.write(p, gdir)
        else:
            p = standins.preset_params(name, seed=1)
            path = gdir / f"{standins.file_stem(p)}.csr"
            if not path.is_file():
                procs.append(subprocess.Popen(
                    [sys.executable, str(REPO / "benchmarks" / "standins.py"), "--preset", name,
                     "--seed", "1", "--out", str(gdir)], stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, text=True))
        out[name] = {"path": str(path), "kind": "hard", "expected": None}
    for n in (cfg["crown_calib"], cfg["crown"]):
        path = gdir / f"crown-{n}.csr"
        write_csr(standins.crown(n), path)
        out[f"crown-{n}"] = {"path": str(path), "kind": "crown", "n": n,
                             "expected": standins.crown_bicliques(n)}
    for p in procs:
        text, _ = p.communicate()
        log("generated:", text.strip().splitlines()[-1] if text.strip() else f"exit {p.returncode}")
    return out


# ------------------------------------------------------------------ records


class Results:
    def __init__(self, out: Path):
        self.path = out / "results.jsonl"
        self.rows: list[dict] = []

    def add(self, rec: dict) -> dict:
        rec = {"t_s": round(time.time() - T0, 1), **rec}
        with LOCK:
            self.rows.append(rec)
            with open(self.path, "a") as f:
                f.write(json.dumps(rec) + "\n")
        return rec


def gpu_record(name: str, info: dict, r, devices, graph) -> dict:
    from mbebench.fingerprint import to_hex

    st = r.stats
    busy = {str(d["id"]): round(d["busy_s"], 3) for d in st["devices"]}
    return {
        "graph": name, "kind": info["kind"], "engine": "cuMBE", "status": "ok",
        "n_left": graph.n_left, "n_right": graph.n_right, "n_edges": graph.n_edges,
        "devices": [d["id"] for d in st["devices"]], "n_devices": st["device_count"],
        "device": st["device"], "shards": st["shards"],
        "bicliques": r.count, "fingerprint": to_hex(r.fingerprint),
        "expected": info.get("expected"),
        "time_s": r.algo_seconds,
        "rate_per_s": r.count / r.algo_seconds if r.algo_seconds else None,
        "kernel_s_sum": st["kernel_s_sum"], "busy_s": busy,
        "busy_max_over_mean": st["busy_max_over_mean"], "startup_s": st["startup_s"],
        "prepare_s": max(d["prepare_s"] for d in st["devices"]),
        "max_task_cost_share": st["max_task_cost_share"], "n_tasks": st["n_tasks"],
        "shard_layout": [[x["shard"], x["device"], round(x["seconds"], 3), x["count"]]
                         for x in st["shard_layout"]],
    }


def run_gpu(pool, res: Results, name: str, info: dict, params: dict, devices, timeout_s: float,
            spd: int) -> dict:
    from mbebench.csr import read_csr

    g = read_csr(info["path"], verify=False)
    tag = f"{name} on {'GPU ' + str(devices[0]) if len(devices) == 1 else f'{len(devices)} GPUs'}"
    if timeout_s < 5:
        log(f"SKIP {tag}: {timeout_s:.0f} s of budget left")
        return res.add({"graph": name, "kind": info["kind"], "engine": "cuMBE",
                        "devices": list(devices), "n_devices": len(devices),
                        "status": "skipped", "message": "no budget left"})
    log(f"start {tag} (limit {timeout_s:.0f} s)")
    try:
        r = pool.run(g, params, devices=devices, shards_per_device=spd, timeout_s=timeout_s)
    except TimeoutError as e:
        log(f"TIMEOUT {tag}: {e}")
        return res.add({"graph": name, "kind": info["kind"], "engine": "cuMBE",
                        "devices": list(devices), "n_devices": len(devices),
                        "status": "timeout", "limit_s": timeout_s, "message": str(e)})
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        log(f"ERROR {tag}: {type(e).__name__}: {e}")
        return res.add({"graph": name, "kind": info["kind"], "engine": "cuMBE",
                        "devices": list(devices), "n_devices": len(devices), "status": "error",
                        "message": f"{type(e).__name__}: {e}",
                        "trace": traceback.format_exc()[-1500:]})
    rec = res.add(gpu_record(name, info, r, devices, g))
    ok = "" if info.get("expected") in (None, r.count) else f" WRONG (expected {info['expected']})"
    log(f"done  {tag}: {r.count:,} bicliques{ok} {rec['fingerprint']} in {r.algo_seconds:.2f} s "
        f"({rec['rate_per_s']:.3g}/s; busy {rec['busy_s']}; {rec['shards']} shards)")
    return rec


# ------------------------------------------------------------------ ParMBE (own process)


def parmbe_child(a) -> int:
    """Counts the graphs (a JSON list of [name, path]) with ParMBE, shard by shard."""
    from baselines import parmbe
    from mbebench.csr import read_csr
    from mbebench.fingerprint import to_hex

    from cumbe.device_worker import _set_pdeathsig

    _set_pdeathsig()  # ends with the driver (it runs in a session of its own)
    items = json.loads(a.parmbe_graphs)
    out = Path(a.out) / "parmbe.jsonl"
    with parmbe.ParMBEPool(a.parmbe) as pool:
        log(f"ParMBE: {a.parmbe} processes ready (compile {pool.compile_s:.1f} s)")
        for name, path in items:
            while not Path(path).is_file():  # the generator writes it atomically
                time.sleep(0.5)
            g = read_csr(path, verify=False)
            n = a.parmbe_shards
            rec = {"graph": name, "engine": f"ParMBE p={a.parmbe}", "shards": n, "status": "ok"}
            t0 = time.perf_counter()
            count = fp = 0
            done = 0
            for i in range(n):
                el = time.perf_counter() - t0
                if done and el + el / done > a.parmbe_limit:  # the next shard would not fit
                    rec.update(status="timeout", partial_bicliques=count,
                               extrapolated_s=round(el * n / done, 1),
                               message=f"{done} of {n} shards in {el:.1f} s, limit "
                                       f"{a.parmbe_limit:g} s; all: ~{el * n / done:.0f} s")
                    break
                r = parmbe.run(g, pool=pool, shard=f"{i}/{n}")
                count += r.count
                fp = (fp + r.fingerprint) & ((1 << 64) - 1)
                done += 1
            el = time.perf_counter() - t0
            rec.update(time_s=el, shards_done=done)
            if rec["status"] == "ok":
                rec.update(bicliques=count, fingerprint=to_hex(fp), rate_per_s=count / el)
            with open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
            log(f"ParMBE {name}: {rec['status']} {rec.get('bicliques', '-')} in {el:.1f} s")
    return 0


# ------------------------------------------------------------------ the run


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/mgpu-out")
    ap.add_argument("--budget", type=float, default=470.0,
                    help="seconds from the start of this script to the last run's end")
    ap.add_argument("--graphs", default="IMDB-actor-hard,BookCrossing-hard",
                    help="stand-in presets (benchmarks/standins.py), in order of priority")
    ap.add_argument("--parts", default="hard,crown,parmbe")
    ap.add_argument("--crown", type=int, default=0, help="n of S_n (default 33)")
    ap.add_argument("--crown-calib", type=int, default=0, help="calibration S_n (default 28)")
    ap.add_argument("--hard-cap", type=float, default=150.0, help="1-GPU limit of a stand-in")
    ap.add_argument("--crown-cap", type=float, default=230.0, help="1-GPU limit of S_33")
    ap.add_argument("--spd", type=int, default=SHARDS_PER_DEVICE,
                    help="shards per device of the 2-GPU runs (default: cumbe's)")
    ap.add_argument("--spd-extra", default="8,6",
                    help="with the budget left: the first stand-in on 2 GPUs with these too")
    ap.add_argument("--parmbe", type=int, default=16)
    ap.add_argument("--parmbe-limit", type=float, default=150.0)
    ap.add_argument("--graph-dir", default="/tmp/mgpu-graphs")
    ap.add_argument("--tiny", action="store_true", default=os.environ.get("MGPU_TINY") == "1",
                    help="the simulator on tiny graphs (a dry run without a GPU)")
    ap.add_argument("--parmbe-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--parmbe-graphs", help=argparse.SUPPRESS)
    ap.add_argument("--parmbe-shards", type=int, default=16, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.tiny:
        # before numba.cuda is imported anywhere: the simulator, two fake devices
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        os.environ.setdefault("MBEBENCH_SIM_DEVICES", "2")
    if a.parmbe_child:
        return parmbe_child(a)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    parts = set(a.parts.split(","))
    budget = Budget(a.budget)
    cfg = config(a)
    res = Results(out)
    res.add({"kind": "meta", "argv": sys.argv[1:], "tiny": a.tiny, "budget_s": a.budget,
             "commit": _commit(), "target": TARGET, "min_t1_s": MIN_T1_S,
             "params": cfg["params"], "shards_per_device": a.spd})
    log(f"multi-GPU benchmark: parts {sorted(parts)}, budget {a.budget:g} s, "
        f"{'TINY (simulator)' if a.tiny else 'GPU'}")

    warm = []
    if not a.tiny:  # the kernel and the host code into numba's cache, while the graphs are made
        warm.append(subprocess.Popen(
            [sys.executable, str(REPO / "benchmarks" / "gpu" / "warm.py"), "--jobs", "1",
             f"{cfg['params']['variant']}:{cfg['params']['threads']}"],
            stdout=open(out / "warm.jsonl", "w"), stderr=subprocess.STDOUT))
        warm.append(subprocess.Popen([sys.executable, "-c", HOST_WARM], cwd=REPO))
    graphs = make_graphs(cfg, Path(a.graph_dir), a.tiny)
    hard = [n for n, _ in cfg["hard"]] if "hard" in parts else []
    calib, crown = f"crown-{cfg['crown_calib']}", f"crown-{cfg['crown']}"
    want_crown = "crown" in parts

    pm = None
    if "parmbe" in parts and cfg["parmbe"] > 0:
        items = [[n, graphs[n]["path"]] for n in hard] + ([[calib, graphs[calib]["path"]]]
                                                           if want_crown else [])
        pm = subprocess.Popen(
            [sys.executable, __file__, "--parmbe-child", "--out", str(out), "--parmbe",
             str(cfg["parmbe"]), "--parmbe-limit", str(a.parmbe_limit),
             "--parmbe-shards", str(2 * a.spd), "--parmbe-graphs", json.dumps(items)]
            + (["--tiny"] if a.tiny else []), start_new_session=True)

    pools = []

    def gpu_runs():
        from cumbe.devices import DevicePool

        pool = DevicePool("all")
        pools.append(pool)
        log(f"GPU workers ready in {pool.start_s:.1f} s: " +
            ", ".join(f"{d}: {pool.names[d]}" for d in pool.ids))
        if warm:
            for w in warm:
                w.wait()
            log("kernel compiled:", (out / "warm.jsonl").read_text().strip()[-300:])
        two = len(pool.ids) >= 2
        if not two:
            log("only one GPU: the 2-GPU runs are skipped")
        params = cfg["params"]
        caps = cfg["caps"]
        t1: dict[str, float] = {}
        pred: dict[str, float] = {}

        def one_gpu(name, dev, cap):
            rec = run_gpu(pool, res, name, graphs[name], params, [dev],
                          min(cap, budget.left() - 10), a.spd)
            if rec["status"] == "ok":
                t1[name] = rec["time_s"]
            return rec

        def phase2_need(names) -> float:
            """Seconds the 2-GPU runs of ``names`` take, at the target ratio, plus overheads."""
            return sum(0.6 * (t1.get(n) or pred.get(n) or caps["hard"] * 0.5) + 8 for n in names)

        def gpu0():
            for i, name in enumerate(hard):
                if i and t1.get(hard[0]) is not None:
                    need = 1.2 * t1[hard[0]] + phase2_need(hard[: i + 1] + [crown]) + 15
                    if need > budget.left():
                        log(f"SKIP {name} (1 GPU): would need ~{need:.0f} s, "
                            f"{budget.left():.0f} s left")
                        res.add({"graph": name, "kind": "hard", "devices": [0], "n_devices": 1,
                                 "status": "skipped", "message": "budget"})
                        hard[i:] = []
                        return
                one_gpu(name, 0, caps["hard"])

        def gpu1():
            dev = pool.ids[1] if two else pool.ids[0]
            rec = one_gpu(calib, dev, 60.0)
            if rec["status"] != "ok":
                return
            k = cfg["crown"] - cfg["crown_calib"]
            # 2**k times the bicliques, each node's lists n_big / n_small times as long
            p = rec["time_s"] * 2**k * cfg["crown"] / cfg["crown_calib"]
            pred[crown] = p
            need = 1.15 * p + phase2_need(hard + [crown]) + 15
            log(f"crown: S_{cfg['crown_calib']} at {rec['rate_per_s']:.3g}/s -> S_{cfg['crown']} "
                f"predicted {p:.0f} s on 1 GPU; phases need ~{need:.0f} s, {budget.left():.0f} s left")
            if p > caps["crown"] or need > budget.left():
                log(f"SKIP {crown} on 1 GPU: predicted {p:.0f} s (limit {caps['crown']:g} s), and "
                    f"with the other runs ~{need:.0f} s of the {budget.left():.0f} s left")
                res.add({"graph": crown, "kind": "crown", "devices": [dev], "n_devices": 1,
                         "status": "skipped", "predicted_s": p,
                         "message": f"predicted {p:.0f} s does not fit the budget"})
                return
            one_gpu(crown, dev, min(caps["crown"], 1.5 * p + 20))

        threads = [threading.Thread(target=f, name=n) for f, n, on in
                   ((gpu0, "gpu0", bool(hard)), (gpu1, "gpu1", want_crown)) if on]
        if not two:  # one GPU: one after the other
            for t in threads:
                t.run()
        else:
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        if two:
            order = hard[:1] + ([crown] if want_crown and (crown in t1 or crown in pred) else []) \
                + hard[1:]
            for name in order:
                base = t1.get(name) or pred.get(name)
                if name not in t1 and name != crown:
                    continue  # its 1-GPU run did not finish: nothing to compare with
                limit = min(0.8 * base + 30, budget.left() - 5)
                run_gpu(pool, res, name, graphs[name], params, list(pool.ids), limit, a.spd)
            # with the time left: other shard counts on the first stand-in (the default's choice)
            for spd in (int(x) for x in re.findall(r"\d+", a.spd_extra)):
                if not hard or hard[0] not in t1:
                    break
                need = 0.7 * t1[hard[0]] + 15
                if need > budget.left():
                    log(f"no time left for {hard[0]} with {spd} shards per device")
                    break
                run_gpu(pool, res, hard[0], graphs[hard[0]], params, list(pool.ids),
                        min(0.8 * t1[hard[0]] + 30, budget.left() - 5), spd)
        pool.close()

    try:
        gpu_runs()
    except Exception as e:  # noqa: BLE001 - recorded; ParMBE and the report go on
        log(f"ERROR in the GPU runs: {type(e).__name__}: {e}")
        res.add({"kind": "error", "graph": "GPU runs", "status": "error",
                 "message": f"{type(e).__name__}: {e}",
                 "trace": traceback.format_exc()[-2000:]})
        for p in pools:
            p.terminate()

    if pm is not None:
        left = max(1.0, budget.left())
        try:
            pm.wait(timeout=left)
        except subprocess.TimeoutExpired:
            log(f"ParMBE stopped at the budget's end ({left:.0f} s)")
            os.killpg(pm.pid, 9)
            pm.wait()
    log(f"finished: {report(res, out, a)} problem(s)")
    return 0


def _commit() -> str | None:
    """The measured tree's commit: $BENCH_COMMIT (a device copy's git HEAD can be stale),
    else git's."""
    if os.environ.get("BENCH_COMMIT"):
        return os.environ["BENCH_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(main())
