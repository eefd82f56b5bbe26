"""How much slower does one ParMBE worker run when P of them run at once?

    python benchmarks/cpu/parmbe_probe.py --cache DIR [--processes 1,2,4,8,16]
        [--dataset YouTube] [--seconds 0.4]

For each P, P processes (spawned, JIT warm) start together (a barrier) and each
runs the same two fixed pieces of work, timed on its own:

* ``alu``: an integer loop that touches no memory: its slowdown is the clock
  (turbo falling with the number of busy cores, or two processes on one
  physical core);
* ``kernel``: the first tasks of the dataset's ParMBE plan (its heaviest
  subproblems, about ``--seconds`` of work alone), on the shared memory-mapped
  CSR as in a real run: its slowdown beyond ``alu``'s is contention for
  caches and memory.

A real P-process run spends the sum of its workers' busy times; if that sum
grows with P by about the ``kernel`` factor printed here, the growth is the
machine's and no change of the scheduling can remove it.  Prints one line per
P: median and max over the processes, and the factors against P=1.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


@njit(cache=True, nogil=True)
def _alu(n):
    x = np.uint64(88172645463325252)
    for _ in range(n):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
    return x


def _fixed_work(csr: str, seconds: float) -> int:
    """How many of the plan's first tasks make about ``seconds`` of work here."""
    from baselines import parmbe
    from mbebench.csr import read_csr

    g = read_csr(csr, verify=False)
    prep = parmbe._Prepared(g, parmbe.choose_side(g, "smaller"))
    plan = parmbe.plan_tasks(prep, 16)
    t0 = time.perf_counter()
    n = 0
    while n < plan.n_tasks and time.perf_counter() - t0 < seconds:
        prep.run(*plan.task(n))
        n += 1
    return n


def _child(i, barrier, out, csr, n_tasks, alu_n):
    from baselines import parmbe
    from mbebench.csr import read_csr

    parmbe.warm_up()
    _alu(10)
    g = read_csr(csr, verify=False)
    prep = parmbe._Prepared(g, parmbe.choose_side(g, "smaller"))
    plan = parmbe.plan_tasks(prep, 16)
    res = {}
    barrier.wait()
    t0, c0 = time.perf_counter(), time.thread_time()
    _alu(alu_n)
    res["alu"] = (time.perf_counter() - t0, time.thread_time() - c0)
    barrier.wait()
    t0, c0 = time.perf_counter(), time.thread_time()
    for k in range(n_tasks):
        prep.run(*plan.task(k))
    res["kernel"] = (time.perf_counter() - t0, time.thread_time() - c0)
    out.put((i, os.getpid(), res))


def probe(procs: int, csr: str, n_tasks: int, alu_n: int) -> dict:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(procs)
    out = ctx.Queue()
    args = (barrier, out, csr, n_tasks, alu_n)
    ps = [ctx.Process(target=_child, args=(i, *args)) for i in range(procs)]
    for p in ps:
        p.start()
    got = [out.get(timeout=600) for _ in ps]
    for p in ps:
        p.join()
    return {k: [r[2][k] for r in got] for k in ("alu", "kernel")}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cache", type=Path, default=REPO / "results" / "bench-cache")
    ap.add_argument("--dataset", default="YouTube")
    ap.add_argument("--processes", default="1,2,4,8,16")
    ap.add_argument("--seconds", type=float, default=0.4, help="work per piece, alone")
    args = ap.parse_args()
    csr = str(args.cache / f"{args.dataset}.csr")
    from baselines import parmbe

    parmbe.warm_up()
    _alu(10)
    n_tasks = _fixed_work(csr, args.seconds)
    t0 = time.perf_counter()
    _alu(50_000_000)
    alu_n = int(50_000_000 * args.seconds / (time.perf_counter() - t0))
    print(f"# nproc={os.cpu_count()} dataset={args.dataset} kernel: first {n_tasks} tasks of the "
          f"16-process plan; alu: {alu_n} iterations", flush=True)  # fmt: skip
    base = {}
    for p in [int(x) for x in args.processes.split(",")]:
        r = probe(p, csr, n_tasks, alu_n)
        line = f"P={p:<3d}"
        for k in ("alu", "kernel"):
            wall = [w for w, _ in r[k]]
            cpu = [c for _, c in r[k]]
            med = statistics.median(wall)
            base.setdefault(k, med)
            line += (
                f" {k}: median {med:.3f}s max {max(wall):.3f}s (x{med / base[k]:.2f} vs P=1;"
                f" cpu/wall {sum(cpu) / sum(wall):.2f})"
            )
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
