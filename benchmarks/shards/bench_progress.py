"""Does the progress reporting slow the CPU engines?  (issue 18 item 4)

    python benchmarks/shards/bench_progress.py [--old DIR] [--rounds 5] [--size 300]

Runs iMBEA and ParMBE (2 processes) on one generated graph (random bipartite, no mirror
needed) in fresh processes, alternating between the trees to compare so that a change in
the machine's load hits both alike, and prints a Markdown table of median algorithm
seconds.  The trees: this checkout with progress lines every 10 s (the default) and every
1 s, this checkout with ``MBEBENCH_PROGRESS_S=0`` (no chunks, no lines), and, with
``--old DIR``, another source tree (e.g. ``git archive e27ca60 | tar -x -C DIR``: before
progress existed).  ``--in-process REPS`` runs the three intervals in turn inside one
process per engine instead, which takes the process-to-process noise out (iMBEA with
``MBEBENCH_PROGRESS_S=0`` runs the code from before progress: one kernel call).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = r'''
import json, os, sys, time
from mbebench.csr import read_csr
def main():
    g = read_csr(sys.argv[1])
    engine, reps = sys.argv[2], int(sys.argv[3])
    if engine == "imbea":
        from baselines.imbea import run
        call = lambda: run(g)
    else:
        from baselines.parmbe import run
        call = lambda: run(g, processes=2)
    call()  # warm: compile or cache load, pool start
    out = []
    if len(sys.argv) > 4:  # in one process, the intervals in turn, run after run
        for _ in range(reps):
            for every in sys.argv[4].split(","):
                os.environ["MBEBENCH_PROGRESS_S"] = every
                c0 = time.process_time()
                r = call()
                cpu = time.process_time() - c0 + sum(r.stats.get("worker_cpu_s") or [])
                out.append((every, r.algo_seconds, cpu, r.count))
        print(json.dumps(out))
        return
    for _ in range(reps):
        c0 = time.process_time()
        r = call()
        # CPU seconds: this process's, and ParMBE's workers' inside their tasks
        cpu = time.process_time() - c0 + sum(r.stats.get("worker_cpu_s") or [])
        out.append((r.algo_seconds, cpu, r.count))
    print(json.dumps(out))
if __name__ == "__main__":
    main()
'''


def graph(path: Path, size: int, p: float, seed: int) -> None:
    import numpy as np

    from mbebench.csr import from_edges, write_csr

    rng = np.random.default_rng(seed)
    m = rng.random((size, size + 20)) < p
    left, right = np.nonzero(m)
    write_csr(from_edges(left, right, size, size + 20), path)


def measure(src: Path, env_extra: dict, g: Path, engine: str, reps: int, script: Path):
    env = {**os.environ, "PYTHONPATH": str(src), **env_extra}
    res = subprocess.run([sys.executable, str(script), str(g), engine, str(reps)],
                         capture_output=True, text=True, env=env, cwd=src, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", type=Path, help="a source tree from before progress lines")
    ap.add_argument("--rounds", type=int, default=5, help="alternations of the trees")
    ap.add_argument("--reps", type=int, default=1, help="runs per process")
    ap.add_argument("--size", type=int, default=300)
    ap.add_argument("--p", type=float, default=0.2)
    ap.add_argument("--engines", nargs="+", default=["imbea", "parmbe"])
    ap.add_argument("--in-process", type=int, metavar="REPS",
                    help="instead: one process per engine running the intervals 0, 10 and 1 "
                    "s in turn, REPS times (no process-to-process noise)")
    a = ap.parse_args()
    if a.in_process:
        in_process(a)
        return
    trees = {"no progress (MBEBENCH_PROGRESS_S=0)": (REPO, {"MBEBENCH_PROGRESS_S": "0"}),
             "progress every 10 s (default)": (REPO, {}),
             "progress every 1 s": (REPO, {"MBEBENCH_PROGRESS_S": "1"})}
    if a.old:
        trees = {"before (--old tree)": (a.old.resolve(), {}), **trees}
    with tempfile.TemporaryDirectory() as tmp:
        g = Path(tmp) / "g.csr"
        graph(g, a.size, a.p, seed=1)
        script = Path(tmp) / "child.py"
        script.write_text(CHILD)
        times = {(e, t): [] for e in a.engines for t in trees}
        cpus = {(e, t): [] for e in a.engines for t in trees}
        counts = set()
        for _ in range(a.rounds):
            for e in a.engines:
                for t, (src, env) in trees.items():
                    for secs, cpu, count in measure(src, env, g, e, a.reps, script):
                        times[(e, t)].append(secs)
                        cpus[(e, t)].append(cpu)
                        counts.add((e, count))
    assert len({c for _, c in counts}) == 1, f"counts differ: {counts}"
    print(f"graph: random {a.size} x {a.size + 20}, p = {a.p} (seed 1), "
          f"{next(iter(counts))[1]} maximal bicliques; {a.rounds} x {a.reps} runs each\n")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| engine | tree | algo s (median) | min | max | vs first | CPU s (median) | vs first |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for e in a.engines:
        base = cbase = None
        for t in trees:
            xs, cs = times[(e, t)], cpus[(e, t)]
            med, cmed = statistics.median(xs), statistics.median(cs)
            base, cbase = base or med, cbase or cmed
            print(f"| {e} | {t} | {med:.3f} | {min(xs):.3f} | {max(xs):.3f} | "
                  f"{100 * (med / base - 1):+.1f}% | {cmed:.3f} | "
                  f"{100 * (cmed / cbase - 1):+.1f}% |")


def in_process(a) -> None:
    intervals = ["0", "10", "1"]
    with tempfile.TemporaryDirectory() as tmp:
        g = Path(tmp) / "g.csr"
        graph(g, a.size, a.p, seed=1)
        script = Path(tmp) / "child.py"
        script.write_text(CHILD)
        print(f"graph: random {a.size} x {a.size + 20}, p = {a.p} (seed 1); one process per "
              f"engine, MBEBENCH_PROGRESS_S = {', '.join(intervals)} in turn, {a.in_process} "
              "times\n")
        print(f"load average at the start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
        print("| engine | MBEBENCH_PROGRESS_S | algo s (median) | min | vs 0 | CPU s (median) "
              "| vs 0 |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for e in a.engines:
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            res = subprocess.run([sys.executable, str(script), str(g), e, str(a.in_process),
                                  ",".join(intervals)], capture_output=True, text=True, env=env,
                                 cwd=REPO, check=True)
            rows = json.loads(res.stdout.strip().splitlines()[-1])
            assert len({r[3] for r in rows}) == 1, "counts differ"
            base = None
            for every in intervals:
                xs = [r[1] for r in rows if r[0] == every]
                cs = [r[2] for r in rows if r[0] == every]
                med, cmed = statistics.median(xs), statistics.median(cs)
                base = base or (med, cmed)
                print(f"| {e} | {every} | {med:.3f} | {min(xs):.3f} | "
                      f"{100 * (med / base[0] - 1):+.1f}% | {cmed:.3f} | "
                      f"{100 * (cmed / base[1] - 1):+.1f}% |")


if __name__ == "__main__":
    main()
