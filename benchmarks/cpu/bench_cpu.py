"""Benchmark the serial iMBEA engine on the paper's KONECT datasets.

    python benchmarks/cpu/bench_cpu.py [--mirror DIR] [--cache DIR] [--side auto|left|right]
        [--timeout S] [--repeats N] [--json OUT] [DATASET ...]

Each archive of the local KONECT mirror is converted once (mbebench.convert)
into ``--cache``; every (dataset, side) then runs in a child process with a
wall-clock limit, so a slow dataset is recorded as a timeout and the rest go on.
Prints one line per run: dataset, |U|=n_left, |V|=n_right, |E|, count,
fingerprint, compile s, algo s and CPU s (medians of the repeats), C++ reference s,
the 1-minute load average at the end of the run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from mirror import cached_csr, mirror_datasets  # noqa: E402

DATASETS = mirror_datasets()

# C++ iMBEA on this machine kind, enumeration seconds (from the project brief)
CPP_REFERENCE_S = {
    "UCforum": 0.44,
    "movielens-t-i": 7.63,
    "movielens-u-t": 7.72,
    "Marvel": 7.66,
    "YouTube": "> 300",
    "movielens-u-i": 215,
}


def convert_dataset(name: str, mirror: Path, cache: Path) -> Path:
    return cached_csr(name, DATASETS[name], mirror, cache)


def child(csr_path: str, side: str, repeats: int) -> None:
    from baselines import imbea
    from mbebench.csr import read_csr
    from mbebench.fingerprint import to_hex

    g = read_csr(csr_path)
    runs, cpu = [], []
    for _ in range(repeats):
        c0 = time.process_time()
        runs.append(imbea.run(g, side=side))
        # CPU seconds of the whole call (warm-up included: about 0.01 s once
        # compiled); less disturbed than algo_s when the machine is shared
        cpu.append(time.process_time() - c0)
    if len({(r.count, r.fingerprint) for r in runs}) != 1:
        raise SystemExit("repeats disagree")
    r = runs[0]
    print(
        json.dumps(
            {
                "n_left": g.n_left,
                "n_right": g.n_right,
                "n_edges": g.n_edges,
                "count": r.count,
                "fingerprint": to_hex(r.fingerprint),
                "compile_s": runs[0].compile_seconds,
                "algo_s": [x.algo_seconds for x in runs],
                "algo_s_median": statistics.median(x.algo_seconds for x in runs),
                "cpu_s": cpu,
                "cpu_s_median": statistics.median(cpu),
                "loadavg": os.getloadavg()[0],
                "side": r.stats["side"],
                "nodes": r.stats["nodes"],
                "tasks": r.stats["worker_tasks"][0],
            }
        )
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="*", default=list(DATASETS), help="paper names")
    ap.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "konect-mirror")
    ap.add_argument("--cache", type=Path, default=REPO / "results" / "bench-cache")
    ap.add_argument("--side", default="auto", help="auto, left, right or a comma list")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json", type=Path, help="append one JSON line per run here")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child[0], a.child[1], int(a.child[2]))
        return 0
    unknown = [d for d in a.datasets if d not in DATASETS]
    if unknown:
        ap.error(f"unknown datasets {unknown}; known: {list(DATASETS)}")
    a.cache.mkdir(parents=True, exist_ok=True)
    hdr = f"{'dataset':22} {'side':5} {'|U|':>7} {'|V|':>7} {'|E|':>7} {'count':>9} "
    hdr += f"{'fingerprint':18} {'compile_s':>9} {'algo_s':>8} {'cpu_s':>8} {'C++_s':>6} load"
    print(hdr, flush=True)
    for name in a.datasets:
        csr_path = convert_dataset(name, a.mirror, a.cache)
        for side in a.side.split(","):
            t0 = time.time()
            cmd = [sys.executable, __file__, "--child", str(csr_path), side, str(a.repeats)]
            path = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
            env = dict(os.environ, PYTHONPATH=path)
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env)
            except subprocess.TimeoutExpired:
                row = {"status": "timeout", "timeout_s": a.timeout}
            else:
                if p.returncode == 0:
                    row = {"status": "ok", **json.loads(p.stdout.strip().splitlines()[-1])}
                else:
                    msg = (p.stderr.strip().splitlines() or ["?"])[-1]
                    row = {"status": "error", "message": msg}
            row.update(dataset=name, side_requested=side, wall_s=round(time.time() - t0, 2))
            ref = CPP_REFERENCE_S.get(name, "")
            if row["status"] == "ok":
                print(
                    f"{name:22} {row['side']:5} {row['n_left']:>7} {row['n_right']:>7} "
                    f"{row['n_edges']:>7} {row['count']:>9} {row['fingerprint']:18} "
                    f"{row['compile_s']:>9.2f} {row['algo_s_median']:>8.3f} "
                    f"{row['cpu_s_median']:>8.3f} {ref!s:>6} {row['loadavg']:.1f}",
                    flush=True,
                )
            else:
                print(f"{name:22} {side:5} {row['status']}: {row.get('message', '')}", flush=True)
            if a.json:
                with open(a.json, "a") as f:
                    f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
