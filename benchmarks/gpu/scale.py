"""cuMBE at the paper's scale, on stand-ins of its large datasets (on a GPU machine).

    python benchmarks/gpu/scale.py --out results/scale --presets BookCrossing,IMDB-actor \\
        --seeds 1 --budget 400 [--parmbe 16] [--cap-gib 24] [--old .old]

For each stand-in (benchmarks/standins.py, generated here into --graphs, reused when
there): cuMBE with the pipeline's settings (warm-up launch, then --repeats timed
launches; kernel seconds, bicliques/s, device memory, grid, arena), ParMBE with
--parmbe processes on the same machine (its algorithm seconds: planning + tasks), and
optionally cuMBE under a device-memory cap and the previous engine (a `git archive`
in --old).  Counts and fingerprints must agree.  Writes OUT/scale.json after every
run, OUT/scale.md and OUT/scale.png (time against |E|), prints the table last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="scale-out")
    ap.add_argument("--graphs", default="/tmp/standins")
    ap.add_argument("--presets", default="YouTube,BookCrossing,stackoverflow,IMDB-actor,DBLP-author")
    ap.add_argument("--seeds", default="1")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--budget", type=float, default=400)
    ap.add_argument("--parmbe", type=int, default=16, help="processes; 0 = skip ParMBE")
    ap.add_argument("--cap-gib", default="", help="comma list: also run under these memory caps")
    ap.add_argument("--cap-presets", default="DBLP-author")
    ap.add_argument("--old", default="", help="folder with the previous engine (cumbe/, mbebench/)")
    ap.add_argument("--old-max-s", type=float, default=40)
    ap.add_argument("--mirror", default="", help="comma list of real graphs (CSR files) to add")
    ap.add_argument("--threads", type=int, default=128)
    ap.add_argument("--k", type=int, default=24)
    a = ap.parse_args()
    t0 = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)

    from benchmarks import standins as S
    from cumbe.engine import run as cumbe_run
    from mbebench.csr import read_csr
    from mbebench.fingerprint import to_hex

    res = {"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "args": vars(a),
           "graphs": {}, "errors": []}

    def save():
        res["elapsed_s"] = round(time.time() - t0, 1)
        (out / "scale.json").write_text(json.dumps(res, indent=1))

    def left():
        return a.budget - (time.time() - t0)

    def err(where, e):
        res["errors"].append({"where": where, "error": f"{type(e).__name__}: {e}",
                              "trace": traceback.format_exc()[-2000:]})
        print("ERROR", where, type(e).__name__, str(e)[:300], flush=True)
        save()

    try:
        from numba import cuda

        free, total = cuda.current_context().get_memory_info()
        res["device_memory"] = {"free": float(free), "total": float(total)}
    except Exception as e:  # noqa: BLE001
        err("device", e)
    pool = None
    if a.parmbe:
        from baselines import parmbe

        pool = parmbe.ParMBEPool(a.parmbe)
    items = [(m, None) for m in a.mirror.split(",") if m]
    items += [(p, int(sd)) for p in a.presets.split(",") if p for sd in a.seeds.split(",")]
    for preset, seed in items:
        if True:
            if left() < 30:
                break
            try:
                if seed is None:  # a real graph
                    path = Path(preset)
                    name = path.stem
                    gen_s = None
                else:
                    name = f"{preset}-s{seed}"
                    p = S.preset_params(preset, seed=seed, scale=a.scale)
                    path = Path(a.graphs) / f"{S.file_stem(p)}.csr"
                    gen_s = None
                    if not path.is_file():
                        tg = time.perf_counter()
                        path, _ = S.write(p, Path(a.graphs))
                        gen_s = time.perf_counter() - tg
                g = read_csr(path)
            except Exception as e:  # noqa: BLE001
                err(f"{preset} generate", e)
                continue
            rec = res["graphs"].setdefault(name, {
                "preset": preset if seed is not None else None, "seed": seed,
                "scale": a.scale if seed is not None else None, "path": str(path),
                "n_left": g.n_left, "n_right": g.n_right, "n_edges": g.n_edges,
                "generate_s": gen_s, "runs": {}})
            save()

            def cu(tag, **extra):
                params = dict(variant="cuMBE", threads=a.threads, k=a.k, **extra)
                times = []
                r = None
                for i in range(1 + a.repeats):
                    if i and left() < 3 * (times[-1] if times else 1) + 10:
                        break
                    try:
                        r = cumbe_run(g, **params)
                    except Exception as e:  # noqa: BLE001
                        err(f"{name} {tag}", e)
                        return None
                    times.append(r.algo_seconds)
                    if r.algo_seconds > 20:
                        break
                st = r.stats
                kern = statistics.median(times[1:] or times)
                rec["runs"][tag] = {
                    "params": params, "count": r.count, "fingerprint": to_hex(r.fingerprint),
                    "kernel_s": times, "median_s": kern,
                    "bicliques_per_s": r.count / kern if kern > 0 else None,
                    **{k: st.get(k) for k in (
                        "blocks", "max_cooperative_blocks", "arena_words_per_warp", "block_tasks",
                        "grid_reason", "memory_bytes", "memory_budget_bytes", "memory_cap_bytes",
                        "device_free_bytes", "n_tasks", "n_twins", "max_task_words",
                        "max_task_wedges", "prepare_s", "setup_s", "compile_s", "nodes", "side")}}
                print(f"{name:28s} {tag:10s} count {r.count:>10d} {to_hex(r.fingerprint)} kernel"
                      f" {kern:.4f} s (+prepare {st.get('prepare_s', 0):.2f} s) blocks"
                      f" {st.get('blocks')} aw {st.get('arena_words_per_warp')} big"
                      f" {st.get('block_tasks')} mem {st.get('memory_bytes', 0) / 2**30:.2f} GiB"
                      f" {st.get('grid_reason') or ''}", flush=True)
                save()
                return r

            r_new = cu("cuMBE")
            for cap in (float(c) for c in a.cap_gib.split(",") if c):
                if seed is not None and preset in a.cap_presets.split(",") and left() > 30:
                    cu(f"cap{cap:g}", device_memory_gib=cap)
            if pool is not None and left() > 30:
                from baselines import parmbe

                try:
                    rp = parmbe.run(g, pool=pool)
                    rec["runs"][f"parmbe-p{a.parmbe}"] = {
                        "count": rp.count, "fingerprint": to_hex(rp.fingerprint),
                        "algo_s": rp.algo_seconds, "stats": {k: rp.stats.get(k) for k in (
                            "plan_s", "tasks", "processes")}}
                    print(f"{name:28s} parmbe-p{a.parmbe} count {rp.count:>10d}"
                          f" {to_hex(rp.fingerprint)} algo {rp.algo_seconds:.3f} s", flush=True)
                    if r_new is not None and (rp.count, rp.fingerprint) != (r_new.count,
                                                                            r_new.fingerprint):
                        res["errors"].append({"where": f"{name} count", "cumbe": r_new.count,
                                              "parmbe": rp.count})
                except Exception as e:  # noqa: BLE001
                    err(f"{name} parmbe", e)
                save()
            if a.old and seed is not None and left() > a.old_max_s + 20:
                code = ("import json,sys; from mbebench.csr import read_csr; "
                        "from cumbe.engine import run; g = read_csr(sys.argv[1]); "
                        "ts = [run(g, variant='cuMBE', threads=128, k=24) for _ in range(2)]; "
                        "print(json.dumps([ts[-1].count, ts[0].algo_seconds, ts[-1].algo_seconds]))")
                try:
                    pr = subprocess.run([sys.executable, "-c", code, str(path)], cwd=a.old,
                                        env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                            [str(Path(a.old).resolve())] + sys.path[1:])},
                                        capture_output=True, text=True, timeout=a.old_max_s)
                    if pr.returncode == 0:
                        c, t1, t2 = json.loads(pr.stdout.strip().splitlines()[-1])
                        rec["runs"]["old-cuMBE"] = {"count": c, "kernel_s": [t1, t2]}
                    else:
                        rec["runs"]["old-cuMBE"] = {"error": pr.stderr.strip().splitlines()[-1][:300]}
                except subprocess.TimeoutExpired:
                    rec["runs"]["old-cuMBE"] = {"error": f"> {a.old_max_s:g} s (timeout)"}
                print(f"{name:28s} old-cuMBE {rec['runs']['old-cuMBE']}", flush=True)
                save()
    if pool is not None:
        pool.close()
    table = write_table(res, out, a.parmbe)
    save()
    print(table)
    print(f"errors: {len(res['errors'])}; elapsed {time.time() - t0:.0f} s")
    return 0 if not res["errors"] else 1


def write_table(res: dict, out: Path, parmbe: int) -> str:
    lines = ["| stand-in | |E| | bicliques | cuMBE kernel s | + host prepare s | bicliques/s |"
             f" device GiB | blocks | block-wide tasks | ParMBE {parmbe} s | ParMBE / cuMBE |"
             " capped run | previous cuMBE s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    pts = []
    for name, g in res["graphs"].items():
        r = g["runs"]
        c = r.get("cuMBE") or {}
        p = r.get(f"parmbe-p{parmbe}") or {}
        caps = [(k, v) for k, v in r.items() if k.startswith("cap") and v.get("median_s")]
        old = r.get("old-cuMBE") or {}
        ks = c.get("median_s")
        ratio = f"{p['algo_s'] / ks:.1f}x" if ks and p.get("algo_s") else "-"
        capped = "; ".join(f"{k[3:]} GiB: {v['median_s']:.3f} s, {v['blocks']} blocks,"
                           f" {v['memory_bytes'] / 2**30:.1f} GiB used, {v['block_tasks']}"
                           " block-wide" for k, v in caps) or "-"
        oldt = (f"{old['kernel_s'][-1]:.3f}" if old.get("kernel_s") else old.get("error", "-"))
        lines.append(
            f"| {name} | {g['n_edges']:,} | {c.get('count', '-'):,} | "
            + (f"{ks:.4f}" if ks else "-")
            + f" | {c.get('prepare_s') or 0:.3f} | "
            + (f"{c['bicliques_per_s']:.3g}" if c.get("bicliques_per_s") else "-")
            + f" | {(c.get('memory_bytes') or 0) / 2**30:.2f} | {c.get('blocks', '-')} |"
            f" {c.get('block_tasks', '-')} | "
            + (f"{p['algo_s']:.3f}" if p.get("algo_s") else "-")
            + f" | {ratio} | {capped} | {oldt} |")
        if ks:
            pts.append((g["n_edges"], ks, p.get("algo_s"), name))
    table = "\n".join(lines)
    (out / "scale.md").write_text(table + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4))
        pts.sort()
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label="cuMBE (kernel)")
        pp = [(p[0], p[2]) for p in pts if p[2]]
        if pp:
            ax.loglog([p[0] for p in pp], [p[1] for p in pp], "s--", label=f"ParMBE {parmbe} proc.")
        for e, t, _, n in pts:
            ax.annotate(n.rsplit("-s", 1)[0], (e, t), fontsize=7)
        ax.set_xlabel("|E|")
        ax.set_ylabel("seconds")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "scale.png", dpi=120)
    except Exception as e:  # noqa: BLE001 - the table is the result; the plot is a view
        print("plot:", e)
    return table


if __name__ == "__main__":
    sys.exit(main())
