"""Verify and time cuMBE on a GPU.

    python benchmarks/gpu/verify_and_time.py --out results/gpu --budget 540 [--smoke]

1. random graphs vs the brute-force oracle: every variant, grid sizes 1, 2, 7
   and the maximum cooperative grid, forced ("eager") and natural work stealing,
   every other run with warp arenas too small for the largest task (block-wide);
2. datasets (CSR files in --csr-dir, converted beforehand with mbebench.convert)
   vs reference counts/fingerprints (benchmarks/gpu/reference.json, from the
   serial iMBEA engine), grid sizes 1/2/7/max on the small ones;
3. timing: full variant (median of --repeats kernel runs after a warm-up run),
   the ablation variants, instrumented cuMBE and noWS, side=left/right.
Results are written after every step to OUT/results.json (a killed run still
leaves them) and a table is printed last.  The script stops starting new work
when --budget seconds are used up.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

# paper name, KONECT name, original cuMBE H100 s (264x512), GMBE H100 s
DATASETS = [
    ("corporate-leadership", "brunson_corporate-leadership", 0.0157, 0.0140),
    ("Unicode", "unicodelang", 0.0117, 0.0130),
    ("UCforum", "opsahl-ucforum", 0.0176, 0.0226),
    ("movielens-u-t", "movielens-10m_ut", 0.091, 0.052),
    ("Marvel", "marvel", 0.066, 0.053),
    ("movielens-t-i", "movielens-10m_ti", 0.247, 0.038),
    ("dbpedia-occupation", "dbpedia-occupation", 0.120, 20.7),
    ("movielens-u-i", "movielens-10m_ui", 0.967, 0.391),
    ("YouTube", "youtube-groupmemberships", 0.930, 2.05),
    ("edit-nawiki", "edit-nawiki", 5.09, 1.54),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="gpu-out")
    ap.add_argument("--csr-dir", default=str(REPO / ".csr"))
    ap.add_argument("--budget", type=float, default=540)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--examples", type=int, default=40)
    ap.add_argument("--datasets", default="")
    ap.add_argument("--threads", type=int, default=128, help="threads per block of every timed run")
    ap.add_argument("--k", type=int, default=24, help="k of every timed run")
    ap.add_argument("--ablation-max-s", type=float, default=3.0,
                    help="run ablations/side only where the full variant takes at most this long")
    ap.add_argument("--skip", default="", help="comma list of steps to skip: oracle,grids,variants,instr,side")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    t0 = time.time()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, a.skip.split(",")))

    import numba
    import numpy as np
    from numba import cuda

    from cumbe.engine import run
    from cumbe.spec import VARIANTS
    from mbebench.csr import from_edges, read_csr
    from mbebench.fingerprint import to_hex
    from mbebench.oracle import count_and_fingerprint

    dev = cuda.get_current_device()
    name = getattr(dev, "name", "simulator")
    name = name.decode() if isinstance(name, bytes) else str(name)
    res = {
        "device": name, "compute_capability": list(getattr(dev, "compute_capability", ())),
        "sm_count": getattr(dev, "MULTIPROCESSOR_COUNT", None),
        "clock_khz": getattr(dev, "CLOCK_RATE", None),
        "numba": numba.__version__, "numba_cuda": _version("numba-cuda"), "numpy": np.__version__,
        "python": platform.python_version(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "oracle": {}, "datasets": {}, "errors": [], "compile_s": {},
    }
    ref_path = REPO / "benchmarks" / "gpu" / "reference.json"
    refs = json.loads(ref_path.read_text()) if ref_path.is_file() else {}
    refs = {k: v for k, v in refs.items() if isinstance(v, dict)}

    def save():
        res["elapsed_s"] = round(time.time() - t0, 1)
        (out / "results.json").write_text(json.dumps(res, indent=1))

    def left():
        return a.budget - (time.time() - t0)

    def note_err(where, e):
        msg = f"{where}: {type(e).__name__}: {e}"
        print("ERROR", msg, flush=True)
        res["errors"].append({"where": where, "error": msg, "trace": traceback.format_exc()[-3000:]})
        save()

    # ---------- 0. compile every kernel once on a tiny graph ----------
    # (benchmarks/gpu/warm.py fills numba's cache beforehand, several builds at once)
    tiny = from_edges([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], 3, 3)
    for v in VARIANTS:
        for instr in (False, True):
            if instr and v not in ("cuMBE", "noWS"):
                continue
            try:
                r = run(tiny, variant=v, instrument=instr, threads=a.threads, k=a.k)
                res["compile_s"][f"{v}{'-instr' if instr else ''}"] = round(r.compile_seconds, 2)
                print(f"compiled {v} instr={instr}: {r.compile_seconds:.1f} s, count {r.count},"
                      f" blocks {r.stats['blocks']}", flush=True)
            except Exception as e:  # noqa: BLE001
                note_err(f"compile {v} instr={instr}", e)
    save()
    if res["errors"]:
        print(json.dumps(res["errors"][0]["trace"])[-2500:])
        return 1

    # ---------- 1. random graphs vs the oracle ----------
    if "oracle" not in skip:
        from cumbe.selfcheck import block_arena, case_params

        rng = np.random.default_rng(12345)
        ok = bad = 0
        n_ex = 6 if a.smoke else a.examples
        t_oracle = time.time()  # its own share: a cold compile must not starve it
        for case in range(n_ex):
            if time.time() - t_oracle > a.budget * 0.3:
                break
            nl, nr = (int(x) for x in rng.integers(2, 15, 2))
            dens = rng.uniform(0.1, 0.7)
            m = int(dens * nl * nr)
            g = from_edges(rng.integers(0, nl, m), rng.integers(0, nr, m), nl, nr)
            ref = count_and_fingerprint(g)
            for vi, v in enumerate(VARIANTS):
                for nb in (1, 2, 7, 0):
                    p = case_params(case + nb, vi, v, nb, a.threads)
                    p["instrument"] = v in ("cuMBE", "noWS") and p["instrument"]
                    if (case + vi + nb) % 2:
                        aw = block_arena(g, p)
                        if aw:
                            p["warp_arena_words"] = aw
                    try:
                        r = run(g, **p)
                        if (r.count, r.fingerprint) == ref:
                            ok += 1
                        else:
                            bad += 1
                            res["errors"].append({"where": "oracle", "params": p, "n_left": nl, "n_right": nr,
                                                  "edges": [list(map(int, e)) for e in g.edges()],
                                                  "expected": [ref[0], to_hex(ref[1])],
                                                  "got": [r.count, to_hex(r.fingerprint)]})
                    except Exception as e:  # noqa: BLE001
                        bad += 1
                        note_err(f"oracle case {case} {p}", e)
        res["oracle"] = {"ok": ok, "bad": bad}
        print(f"oracle: {ok} ok, {bad} bad", flush=True)
        save()

    # ---------- 2+3. datasets ----------
    wanted = [d for d in DATASETS if not a.datasets or d[0] in a.datasets.split(",") or d[1] in a.datasets.split(",")]
    if a.smoke:
        wanted = wanted[:3]
    graphs = {}
    for paper, kname, _, _ in wanted:
        p = Path(a.csr_dir) / f"{kname}.csr"
        if p.is_file():
            graphs[paper] = (kname, read_csr(p))

    def one(paper, tag, **params):
        kname, g = graphs[paper]
        d = res["datasets"].setdefault(paper, {"konect": kname, "n_left": g.n_left, "n_right": g.n_right,
                                               "n_edges": g.n_edges, "runs": {}})
        try:
            r = run(g, **params)
        except Exception as e:  # noqa: BLE001
            note_err(f"{paper} {tag}", e)
            return None
        ref = refs.get(kname)
        match = None if ref is None else (r.count == ref["count"] and to_hex(r.fingerprint) == ref["fingerprint"])
        entry = d["runs"].setdefault(tag, {"params": params, "kernel_s": [], "count": r.count,
                                           "fingerprint": to_hex(r.fingerprint), "match_reference": match})
        entry["kernel_s"].append(r.algo_seconds)
        entry["compile_s"] = r.compile_seconds
        for key in ("blocks", "memory_bytes", "arena_words_per_warp", "block_tasks", "grid_reason",
                    "n_tasks", "max_task_words", "setup_s", "prepare_s"):
            entry[key] = r.stats.get(key)
        if entry["count"] != r.count or entry["fingerprint"] != to_hex(r.fingerprint):
            entry["match_reference"] = False
            entry.setdefault("inconsistent", []).append([r.count, to_hex(r.fingerprint)])
        if match is False:
            res["errors"].append({"where": f"{paper} {tag}", "expected": ref, "got": [r.count, to_hex(r.fingerprint)]})
        for key in ("phases_s", "worker_busy_s", "worker_tasks", "clock_hz", "nodes"):
            if key in r.stats:
                entry[key] = r.stats[key]
        print(f"{paper:22s} {tag:14s} count {r.count:>10d} {to_hex(r.fingerprint)} ref={match}"
              f" kernel {r.algo_seconds:.5f} s blocks {r.stats.get('blocks')}"
              f" aw {r.stats.get('arena_words_per_warp')} big {r.stats.get('block_tasks')}"
              f" setup {r.stats.get('setup_s', 0):.2f} s", flush=True)
        save()
        return r

    # full variant, all datasets, timed
    for paper in graphs:
        if left() < 30:
            break
        full = dict(variant="cuMBE", threads=a.threads, k=a.k)
        r0 = one(paper, "cuMBE", **full)  # warm-up (also timed)
        n_rep = a.repeats if a.smoke is False else 1
        if r0 is not None and r0.algo_seconds > 1:
            n_rep = 2 if r0.algo_seconds < 10 else 1
        for _ in range(n_rep if r0 is not None else 0):
            if left() < 30 or one(paper, "cuMBE", **full) is None:
                break
        runs = res["datasets"][paper]["runs"].get("cuMBE")
        if runs:
            ks = runs["kernel_s"][1:] or runs["kernel_s"]
            runs["median_s"] = statistics.median(ks)
        save()
    # grid sizes on the small graphs (correctness across grids)
    if "grids" not in skip:
        for paper in list(graphs)[:3]:
            for nb in (1, 2, 7):
                if left() < 30:
                    break
                one(paper, f"cuMBE-b{nb}", variant="cuMBE", blocks=nb, threads=a.threads, k=a.k)
            if left() > 30:
                one(paper, "cuMBE-eager-k3", variant="cuMBE", k=3, eager_steal=2, threads=a.threads)
    if "instr" not in skip:
        for paper in graphs:
            for v in ("cuMBE", "noWS"):
                if v == "noWS" and res["datasets"][paper]["runs"].get("cuMBE", {}).get("median_s", 0) > 5:
                    continue
                if left() < 40:
                    break
                one(paper, f"{v}-instr", variant=v, instrument=True, threads=a.threads, k=a.k)
    # ablations and instrumented runs
    if "variants" not in skip:
        for v in ("noWS", "noES", "noRS"):
            for paper in graphs:
                if left() < 60:
                    break
                if res["datasets"][paper]["runs"].get("cuMBE", {}).get("median_s", 0) > a.ablation_max_s:
                    continue
                r0 = one(paper, v, variant=v, threads=a.threads, k=a.k)
                if r0 is not None and r0.algo_seconds < 2 and left() > 60:
                    one(paper, v, variant=v, threads=a.threads, k=a.k)
                e = res["datasets"][paper]["runs"].get(v)
                if e:
                    e["median_s"] = statistics.median(e["kernel_s"][1:] or e["kernel_s"])
    if "side" not in skip:
        for paper in graphs:
            if res["datasets"][paper]["runs"].get("cuMBE", {}).get("median_s", 0) > a.ablation_max_s:
                continue
            for side in ("left", "right"):
                if left() < 40:
                    break
                r0 = one(paper, f"cuMBE-{side}", variant="cuMBE", side=side, threads=a.threads, k=a.k)
                if r0 is not None and r0.algo_seconds < 2 and left() > 40:
                    one(paper, f"cuMBE-{side}", variant="cuMBE", side=side, threads=a.threads, k=a.k)
                e = res["datasets"][paper]["runs"].get(f"cuMBE-{side}")
                if e:
                    e["median_s"] = statistics.median(e["kernel_s"][1:] or e["kernel_s"])
    save()

    # ---------- table ----------
    lines = ["| dataset | |U| | |V| | |E| | count | ref ok | cuMBE s (median) | noWS | noES | noRS | orig cuMBE | GMBE |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for paper, kname, orig, gmbe in DATASETS:
        d = res["datasets"].get(paper)
        if not d:
            continue
        r = d["runs"]

        def med(tag):
            e = r.get(tag)
            return f"{e['median_s']:.4f}" if e and "median_s" in e else "-"

        c = r.get("cuMBE", {})
        lines.append(f"| {paper} | {d['n_left']} | {d['n_right']} | {d['n_edges']} | {c.get('count', '-')} |"
                     f" {c.get('match_reference')} | {med('cuMBE')} | {med('noWS')} | {med('noES')} | {med('noRS')} |"
                     f" {orig} | {gmbe} |")
    table = "\n".join(lines)
    (out / "table.md").write_text(table + "\n")
    save()
    print(table)
    print(f"errors: {len(res['errors'])}; elapsed {time.time() - t0:.0f} s")
    return 0 if not res["errors"] else 1


def _version(dist):
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001
        return None


if __name__ == "__main__":
    sys.exit(main())
