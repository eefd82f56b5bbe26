"""Benchmark ParMBE (baselines/parmbe.py) on the paper's KONECT datasets and a
synthetic hub graph, for one or more process counts.

    python benchmarks/cpu/bench_parmbe.py [--processes 1,2,4,8,16] [--mirror DIR]
        [--cache DIR] [--timeout S] [--repeats N] [--split-threshold N]
        [--tasks-per-process N] [--side smaller|larger|left|right] [--json OUT]
        [DATASET ...]

Each archive of the local KONECT mirror is converted once (mbebench.convert)
into ``--cache``.  Every (process count) runs in one child process, in its own
process group, that starts and warms one pool and then runs the datasets in
turn; each dataset has a wall-clock limit (``--timeout``): past it the child's
whole group is killed, the dataset is recorded as a timeout and the next
process count / dataset goes on.  Prints one line per run (algo s = median of
the repeats; compile s = the pool's JIT warm-up, apart from algo s; plan_s,
ramp_s, end_spread_s and the busy / CPU sums say where algo s goes, see
benchmarks/cpu/parmbe.md).

Dataset ``hub-13.8k`` is synthetic: a 2000 x 2000 sparse random graph plus two
vertices of degree 1200 on each side (13,770 edges), the shape on which the
C++ ParMBE takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from mirror import cached_csr, mirror_datasets  # noqa: E402

DATASETS = mirror_datasets()
SYNTHETIC = ("hub-13.8k",)

# C++ ParMBE with 2 threads on this 2-core machine kind, enumeration seconds
# (from the project brief).
CPP_PARMBE_2T_S = {
    "UCforum": 0.88,
    "movielens-t-i": 69.0,
    "movielens-u-t": 9.84,
    "Marvel": 6.82,
    "YouTube": 217,
    "movielens-u-i": 103,
    "hub-13.8k": "> 300",
}


def hub_graph(n_left=2000, n_right=2000, m=9000, hubs=2, hub_deg=1200, seed=0):
    import numpy as np

    from mbebench.csr import from_edges

    rng = np.random.default_rng(seed)
    lft, rgt = [rng.integers(0, n_left, m)], [rng.integers(0, n_right, m)]
    for h in range(hubs):
        lft.append(np.full(hub_deg, h))
        rgt.append(rng.choice(n_right, hub_deg, replace=False))
        rgt.append(np.full(hub_deg, h))
        lft.append(rng.choice(n_left, hub_deg, replace=False))
    return from_edges(np.concatenate(lft), np.concatenate(rgt), n_left, n_right)


def prepare(name: str, mirror: Path, cache: Path) -> Path:
    out_csr = cache / f"{name}.csr"
    if out_csr.exists():
        return out_csr
    cache.mkdir(parents=True, exist_ok=True)
    if name == "hub-13.8k":
        from mbebench.csr import write_csr

        write_csr(hub_graph(), out_csr)
        return out_csr
    return cached_csr(name, DATASETS[name], mirror, cache)


def child(
    processes: int, repeats: int, split_threshold: int, tpp: int, side: str, jobs: list[str]
) -> None:
    """One pool, then each (name, csr) in turn; one JSON line per dataset."""
    from baselines import parmbe
    from mbebench.csr import read_csr
    from mbebench.fingerprint import to_hex

    with parmbe.ParMBEPool(processes) as pool:
        hello = {"pool": True, "pool_start_s": pool.start_s, "compile_s": pool.compile_s}
        print(json.dumps(hello), flush=True)
        for job in jobs:
            name, csr = job.split("=", 1)
            g = read_csr(csr)
            algo, res = [], None
            for _ in range(repeats):
                res = parmbe.run(
                    g, pool=pool, split_threshold=split_threshold, side=side, tasks_per_process=tpp
                )
                algo.append(res.algo_seconds)
            row = {
                "dataset": name,
                "processes": processes,
                "n_left": g.n_left,
                "n_right": g.n_right,
                "n_edges": g.n_edges,
                "count": res.count,
                "fingerprint": to_hex(res.fingerprint),
                "algo_s": algo,
                "algo_s_median": statistics.median(algo),
                "compile_s": res.compile_seconds,
                "stats": res.stats,
            }
            print(json.dumps(row), flush=True)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_processes(processes, names, csrs, args, out) -> None:
    """Run the datasets for one process count; on a timeout, restart after it."""
    todo = list(names)
    while todo:
        cmd = [
            sys.executable, __file__, "--child", str(processes), str(args.repeats),
            str(args.split_threshold), str(args.tasks_per_process), args.side,
        ] + [f"{n}={csrs[n]}" for n in todo]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True)
        os.set_blocking(proc.stdout.fileno(), False)
        buf = ""
        started = None
        current = todo[0]
        try:
            while True:
                line = proc.stdout.readline()
                if line:
                    buf += line
                    if not buf.endswith("\n"):
                        continue
                    row, buf = json.loads(buf), ""
                    if row.get("pool"):
                        print(f"# P={processes}: pool up in {row['pool_start_s']:.2f} s, "
                              f"JIT warm-up {row['compile_s']:.2f} s", flush=True)  # fmt: skip
                    else:
                        report(row, out)
                        todo.remove(row["dataset"])
                    started = time.monotonic()
                    current = todo[0] if todo else None
                    continue
                if proc.poll() is not None:
                    break
                if started is not None and current and time.monotonic() - started > args.timeout:
                    _kill_group(proc)
                    row = {"dataset": current, "processes": processes, "timeout_s": args.timeout}
                    report(row, out)
                    todo.remove(current)
                    break
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                _kill_group(proc)
        if proc.returncode not in (0, -signal.SIGKILL) and todo:
            row = {"dataset": todo[0], "processes": processes, "error": f"rc {proc.returncode}"}
            report(row, out)
            todo.pop(0)


def report(row: dict, out) -> None:
    name = row["dataset"]
    ref = CPP_PARMBE_2T_S.get(name, "")
    if "timeout_s" in row:
        print(
            f"{name:22s} P={row['processes']:<3d} TIMEOUT after {row['timeout_s']} s"
            f"   (C++ 2t: {ref})"
        )
    elif "error" in row:
        print(f"{name:22s} P={row['processes']:<3d} ERROR {row['error']}")
    else:
        s = row["stats"]
        busy = s["worker_busy_s"]
        # where the time beyond the work goes (older rows lack these keys)
        extra = "".join(
            f" {k}={s[k]:.3f}s" for k in ("plan_s", "ramp_s", "end_spread_s") if k in s
        )
        if "worker_cpu_s" in s:
            extra += f" busy_sum={sum(busy):.2f}s cpu_sum={sum(s['worker_cpu_s']):.2f}s"
        if "presplit_tasks" in s:
            extra += f" presplit={s['presplit_tasks']}"
        print(
            f"{name:22s} P={row['processes']:<3d} |L|={row['n_left']:<6d} |R|={row['n_right']:<6d} "
            f"|E|={row['n_edges']:<7d} count={row['count']:<9d} fp={row['fingerprint']} "
            f"compile={row['compile_s']:.2f}s algo={row['algo_s_median']:.3f}s "
            f"[{', '.join(f'{a:.3f}' for a in row['algo_s'])}] "
            f"busy=[{', '.join(f'{b:.2f}' for b in busy)}] tasks={s['tasks']} "
            f"splits={s['split_tasks']} max_task={s['max_task_s']:.2f}s{extra}   (C++ 2t: {ref})",
            flush=True,
        )
    if out is not None:
        out.write(json.dumps(row) + "\n")
        out.flush()


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, p, rep, thr, tpp, side, *jobs = sys.argv
        child(int(p), int(rep), int(thr), int(tpp), side, jobs)
        return 0
    from baselines.parmbe import DEFAULT_SPLIT_THRESHOLD, TASKS_PER_PROCESS

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    everything = list(DATASETS) + list(SYNTHETIC)
    ap.add_argument("datasets", nargs="*", help=f"default: all of {everything}")
    ap.add_argument("--processes", default=str(os.cpu_count()), help="comma list, e.g. 1,2,4,8,16")
    ap.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "konect-mirror")
    ap.add_argument("--cache", type=Path, default=REPO / "results" / "bench-cache")
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds per dataset and process count"
    )
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--split-threshold", type=int, default=DEFAULT_SPLIT_THRESHOLD)
    ap.add_argument("--tasks-per-process", type=int, default=TASKS_PER_PROCESS)
    ap.add_argument("--side", default="smaller", choices=["smaller", "larger", "left", "right"])
    ap.add_argument("--json", type=Path, help="append one JSON line per run here")
    args = ap.parse_args(argv)
    names = args.datasets or list(DATASETS) + list(SYNTHETIC)
    for n in names:
        # a CSR already in the cache needs no mirror (a machine without the mirror has none)
        if n not in DATASETS and n not in SYNTHETIC and not (args.cache / f"{n}.csr").exists():
            ap.error(f"unknown dataset {n!r} (not in the mirror, no {args.cache / (n + '.csr')})")
    csrs = {n: prepare(n, args.mirror, args.cache) for n in names}
    procs = [int(p) for p in args.processes.split(",")]
    print(f"# nproc={os.cpu_count()} processes={procs} side={args.side} "
          f"split_threshold={args.split_threshold} tasks_per_process={args.tasks_per_process} "
          f"repeats={args.repeats}", flush=True)  # fmt: skip
    out = open(args.json, "a") if args.json else None
    try:
        for p in procs:
            run_processes(p, names, csrs, args, out)
    finally:
        if out:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
