"""cuMBE on 1, 2 and 4 GPUs of one node on skewed graphs: a crown union with one dominant
component (its count known exactly) and movielens-10m_ui tiled (README.md, "Skewed graphs").

    python3 benchmarks/multi-gpu/balance.py --out DIR [--budget 390] [--archives DIR]
    MGPU_TINY=1 python3 benchmarks/multi-gpu/balance.py --out DIR    # dry run: the simulator

Within ``--budget`` seconds: the builds into numba's cache while the graphs are made, one
worker per GPU (cumbe.devices.DevicePool), then per graph 1, 2 and 4 GPUs (``--spd`` shards
per device) and 2 and 4 GPUs with ``--spd-extra-*`` shards per device.  Checks: equal counts and
fingerprints, the crowns' count exact, 4 GPUs >= 3.6x and 2 GPUs >= 1.9x one GPU.  Writes
DIR/results.jsonl (one line per run, every shard's device and seconds) and DIR/results.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for p in (str(REPO), str(REPO / "benchmarks")):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench import _commit  # noqa: E402 - beside this script: the measured tree's commit

T0 = time.time()
TARGETS = {2: 1.9, 4: 3.6}
ARCHIVE = "download.tsv.movielens-10m_ui.tar.bz2"
# numba's first calls of the host code (preparation, estimates, split, shard partition)
HOST_WARM = ("import sys; sys.path[:0] = ['.', 'benchmarks']; import numpy as np, standins; "
             "from cumbe.engine import prepare_for, task_needs; from cumbe.prepare import split, "
             "with_estimates; from mbebench.shard import assign_weighted as a; p = with_estimates("
             "prepare_for(standins.crown(6))); task_needs(p, 1); split(p, 1, 2); a([1.0], [1, 1])")


def log(*a) -> None:
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def archives_dir(given: str | None) -> Path | None:
    """The folder holding the movielens archive: ``given``, else the first that has it."""
    cands = [Path(given)] if given else [REPO / "shared" / "konect-mirror",
                                         Path("/work/shared/konect-mirror"),
                                         REPO / "konect-mirror"]
    return next((d for d in cands if (d / ARCHIVE).is_file()), None)


def make_graphs(a, gdir: Path) -> dict:
    """name -> {"path", "expected" (crowns) or "skip" (why not)}."""
    import numpy as np

    import standins
    from mbebench.csr import from_edges, read_csr, write_csr
    from scale.scale import tile

    gdir.mkdir(parents=True, exist_ok=True)
    ns = [int(x) for x in a.crowns.split(",")]
    out = {}
    name = f"crowns-{ns[0]}+{len(ns) - 1}"
    path = gdir / f"{name}.csr"
    write_csr(standins.crowns(ns), path)
    out[name] = {"path": str(path), "expected": sum(2**n - 2 for n in ns), "kind": "crowns"}
    name = f"{'random' if a.tiny else 'movielens-10m_ui'}-x{a.tile}"
    path = gdir / f"{name}.csr"
    if a.tiny:  # a small random graph, tiled the same way
        rng = np.random.default_rng(2)
        l, r = np.nonzero(rng.random((6, 7)) < 0.5)
        write_csr(tile(from_edges(l, r, 6, 7), a.tile), path)
    elif not path.is_file():
        arch = archives_dir(a.archives)
        if arch is None:
            out[name] = {"skip": f"no {ARCHIVE} (--archives)", "kind": "tiled"}
            return out
        base = gdir / "movielens-10m_ui.csr"
        if not base.is_file():
            subprocess.run([sys.executable, "-m", "mbebench", "convert", "--dataset",
                            "movielens-10m_ui", "--archive", str(arch / ARCHIVE), "--out-csr",
                            str(base), "--out-meta", str(gdir / "movielens-10m_ui.json")],
                           check=True, cwd=REPO)
        write_csr(tile(read_csr(base), a.tile), path)
    out[name] = {"path": str(path), "expected": None, "kind": "tiled"}
    return out


def record(name: str, info: dict, r, g, spd: int) -> dict:
    from mbebench.fingerprint import to_hex

    st = r.stats
    lay = st["shard_layout"]
    return {
        "graph": name, "kind": info["kind"], "status": "ok", "n_edges": g.n_edges,
        "n_devices": st["device_count"], "device": st["device"], "spd": spd,
        "shards": st["shards"], "bicliques": r.count, "fingerprint": to_hex(r.fingerprint),
        "expected": info.get("expected"), "time_s": r.algo_seconds,
        "total_wall_s": st["total_wall_s"], "startup_s": st["startup_s"],
        "busy_s": [round(d["busy_s"], 3) for d in st["devices"]],
        "kernel_s": [round(d["kernel_s"], 3) for d in st["devices"]],
        "busy_max_over_mean": st["busy_max_over_mean"],
        "pieces": st.get("task_pieces"),
        "max_task_cost_share": st["max_task_cost_share"], "n_tasks": st["n_tasks"],
        "max_shard_s": max((x["seconds"] for x in lay), default=0.0),
        "shard_setup_s": sum(x.get("setup_s") or 0.0 for x in lay),
        "shard_host_s": {k: round(sum((x.get("host_s") or {}).get(k, 0.0) for x in lay), 3)
                         for k in {k for x in lay for k in (x.get("host_s") or {})}},
        # shard, device, start s, seconds, kernel s, host setup s, count, tasks, est. share
        "shard_layout": [[x["shard"], x["device"], round(x["start_s"], 3),
                          round(x["seconds"], 3), round(x["kernel_s"], 3),
                          round(x.get("setup_s") or 0.0, 3), x["count"], x["tasks"],
                          round(x["est_cost"] / max(st["shard_cost"], 1e-300), 4)]
                         for x in lay],
    }


def run_one(pool, rows: list, out: Path, name: str, info: dict, params: dict, n: int,
            spd: int, limit: float) -> dict:
    from mbebench.csr import read_csr

    g = read_csr(info["path"], verify=False)
    tag = f"{name} on {n} GPU(s), {spd} shards per device"
    base = {"graph": name, "kind": info["kind"], "n_devices": n, "spd": spd}
    if limit < 5:
        rec = {**base, "status": "skipped", "message": "no budget left"}
    else:
        log(f"start {tag} (limit {limit:.0f} s)")
        try:
            r = pool.run(g, params, devices=pool.ids[:n], shards_per_device=spd,
                         timeout_s=limit)
            rec = record(name, info, r, g, spd)
        except Exception as e:  # noqa: BLE001 - recorded, the benchmark goes on
            rec = {**base, "status": "timeout" if isinstance(e, TimeoutError) else "error",
                   "message": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-1500:]}
    rec = {"t_s": round(time.time() - T0, 1), **rec}
    rows.append(rec)
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    log(f"{rec['status']:7s} {tag}: " + (f"{rec['bicliques']:,} in {rec['time_s']:.2f} s, busy "
                                         f"{rec['busy_s']}" if rec["status"] == "ok"
                                         else rec.get("message", "")))
    return rec


def report(rows: list, out: Path, a, meta: dict) -> int:
    """results.md (one line per run) and the checks; returns the number of problems."""
    lines = [f"cuMBE on 1, 2 and 4 GPUs (devices = the first n; time = wall time from the "
             f"moment the devices were ready); commit {meta['commit']}"
             + (" — TINY dry run in the CUDA simulator: times mean nothing" if a.tiny else ""), "",
             "| graph | \\|E\\| | bicliques | GPUs | shards | s | speed-up | target | busy s per "
             "GPU | longest shard s | shards' host setup s | pieces | equal |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    problems = []
    for name in dict.fromkeys(r["graph"] for r in rows):
        rs = [r for r in rows if r["graph"] == name]
        ok = [r for r in rs if r["status"] == "ok"]
        one = next((r for r in ok if r["n_devices"] == 1), None)
        seen = {(r["bicliques"], r["fingerprint"]) for r in ok}
        exp = next((r["expected"] for r in ok if r.get("expected")), None)
        equal = len(seen) == 1 and (exp is None or next(iter(seen))[0] == exp)
        if ok and not equal:
            problems.append(f"{name}: counts/fingerprints differ {sorted(seen)} (expected {exp})")
        for r in rs:
            if r["status"] != "ok":
                problems.append(f"{name} on {r['n_devices']}: {r['status']} {r.get('message')}")
                lines.append(f"| {name} | | | {r['n_devices']} | | {r['status']} | | | | | | | |")
                continue
            sp = one["time_s"] / r["time_s"] if one and r["time_s"] else None
            tgt = TARGETS.get(r["n_devices"]) if r["spd"] == a.spd else None
            if sp is not None and tgt and not a.tiny and sp < tgt:
                problems.append(f"{name} on {r['n_devices']} GPUs: {sp:.2f}x < {tgt}x")
            lines.append(
                f"| {name} | {r['n_edges']:,} | {r['bicliques']:,} | {r['n_devices']} | "
                f"{r['shards']} | {r['time_s']:.2f} | {'' if sp is None else f'{sp:.2f}x'} | "
                f"{'' if not tgt else f'>= {tgt}x'} | {' / '.join(f'{b:.2f}' for b in r['busy_s'])}"
                f" | {r['max_shard_s']:.2f} | {r['shard_setup_s']:.2f} | {r['pieces']} | "
                f"{'yes' if equal else 'NO'} |")
    lines += ["", "Problems:" if problems else "No problems.", *[f"- {p}" for p in problems]]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)
    return len(problems)


def start_warm(a, out: Path, params: dict) -> list:
    """Every build the runs may launch, and the host code, into numba's caches."""
    if a.tiny:
        return []
    v, t = params["variant"], params["threads"]
    return [subprocess.Popen([sys.executable, str(REPO / "benchmarks" / "gpu" / "warm.py"),
                              "--jobs", "16", f"{v}:{t}", f"{v}-pieces:{t}"],
                             stdout=open(out / "warm.jsonl", "w"), stderr=subprocess.STDOUT),
            subprocess.Popen([sys.executable, "-c", HOST_WARM], cwd=REPO)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/mgpu-balance")
    ap.add_argument("--budget", type=float, default=390.0,
                    help="seconds from the start of this script to the last run's end")
    ap.add_argument("--crowns", default="31,29,28,27,26,25,24,23,22,21,20",
                    help="n of every crown S_n of the union, the dominant one first")
    ap.add_argument("--tile", type=int, default=200)
    ap.add_argument("--archives", default=None, help=f"folder holding {ARCHIVE}")
    from cumbe.spec import SHARDS_PER_DEVICE  # (imports no numba: --tiny still can)

    ap.add_argument("--spd", type=int, default=SHARDS_PER_DEVICE,
                    help="shards per device (default: cuMBE's)")
    ap.add_argument("--spd-extra-tiled", default="4",
                    help="shards per device of more 2- and 4-GPU runs of the tiled graph")
    ap.add_argument("--spd-extra-crowns", default="4",
                    help="shards per device of more 2- and 4-GPU runs of the crown union")
    ap.add_argument("--graph-dir", default="/tmp/mgpu-balance-graphs")
    ap.add_argument("--tiny", action="store_true", default=os.environ.get("MGPU_TINY") == "1")
    a = ap.parse_args()
    if a.tiny:  # before numba.cuda is imported anywhere: the simulator, four fake devices
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        os.environ.setdefault("MBEBENCH_SIM_DEVICES", "4")
        if a.crowns == ap.get_default("crowns"):
            a.crowns = "6,4,3"
        a.tile = 3 if a.tile == ap.get_default("tile") else a.tile
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("")
    params = (dict(variant="cuMBE", threads=32, blocks=1, k=2) if a.tiny
              else dict(variant="cuMBE", threads=128, blocks=0, k=24))
    meta = {"kind": "meta", "argv": sys.argv[1:], "tiny": a.tiny, "commit": _commit(),
            "params": params, "spd": a.spd}
    with open(out / "results.jsonl", "a") as f:
        f.write(json.dumps(meta) + "\n")
    warm = start_warm(a, out, params)
    graphs = make_graphs(a, Path(a.graph_dir))
    log("graphs:", {k: v.get("skip", v["path"]) for k, v in graphs.items()})
    from cumbe.devices import DevicePool

    rows: list = []
    with DevicePool("all") as pool:
        log(f"{len(pool.ids)} workers ready in {pool.start_s:.1f} s: {pool.names}")
        for w in warm:
            w.wait()
        if warm:
            log("compiled:", (out / "warm.jsonl").read_text().strip()[-400:])
        counts = [n for n in (1, 2, 4) if n <= len(pool.ids)]
        for name, info in graphs.items():
            if "skip" in info:
                rows.append({"graph": name, "kind": info["kind"], "n_devices": 0,
                             "status": "skipped", "message": info["skip"]})
                continue
            runs = [(n, a.spd) for n in counts]
            extra = a.spd_extra_tiled if info["kind"] == "tiled" else a.spd_extra_crowns
            runs += [(n, int(x)) for n in counts if n > 1 for x in extra.split(",") if x]
            t1 = None
            for n, spd in runs:
                left = a.budget - (time.time() - T0) - 5
                limit = left if t1 is None else min(left, 1.2 * t1 + 30)
                rec = run_one(pool, rows, out, name, info, params, n, spd, limit)
                if n == 1 and rec["status"] == "ok":
                    t1 = rec["time_s"]
    problems = report(rows, out, a, meta)
    log(f"finished: {problems} problem(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
