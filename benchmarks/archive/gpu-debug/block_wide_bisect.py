"""Which block-wide task makes the kernel fault?  Bisection over a graph's block-wide tasks,
one child process per launch (a fault leaves the CUDA context unusable).  Device only:

    python benchmarks/archive/gpu-debug/block_wide_bisect.py GRAPH.csr AW [--warp-tasks all|none] [--blocks N]

Tasks whose arena need exceeds AW (``warp_arena_words``) run block-wide, largest need first
(as the engine orders them).  A child runs the block-wide tasks [J0, J1) of that order (plus
every warp task with ``--warp-tasks all``) and exits 3 on a fault.  The parent bisects to a
single task where it can, then runs that task alone on one block and on the full grid, and
prints its prepare index (for ``block_wide_sim.py --task``), vertex, degree, wedges and need.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))
FAULT = 3


def block_order(graph_path: str, aw: int):
    from cumbe import layout
    from cumbe.prepare import prepare
    from mbebench.csr import read_csr

    g = read_csr(graph_path)
    p = prepare(g, "auto", True)
    needs = layout.needs(p.task_deg, p.task_wedges, p.n_higher, p.task_dv, True)
    big = np.nonzero(needs > aw)[0]
    order = big[np.argsort(-needs[big], kind="stable")]
    return g, p, needs, order


def run_only_tasks(sel) -> None:
    """Make cuMBE runs in this process start only the first-level tasks ``sel`` (prepare
    indices): the engine's preparation, then a subset of its task arrays."""
    import cumbe.engine as E
    from cumbe.prepare import prepare as real_prepare

    sel = np.asarray(sel, dtype=np.int64)

    def subset(graph, side, rs):
        p = real_prepare(graph, side, rs)
        return replace(p, tasks=p.tasks[sel], task_deg=p.task_deg[sel],
                       task_wedges=p.task_wedges[sel], n_higher=p.n_higher[sel],
                       task_dv=p.task_dv[sel])

    E.prepare = subset


def child(args) -> int:
    import cumbe.engine as E

    g, _, needs, order = block_order(args.graph, args.aw)
    keep = list(order[args.j0:args.j1])
    if args.warp_tasks == "all":
        keep += list(np.nonzero(needs <= args.aw)[0])
    run_only_tasks(sorted(int(i) for i in keep))
    try:
        r = E.run(g, variant="cuMBE", threads=128, blocks=args.blocks,
                  warp_arena_words=args.aw)
    except Exception as e:  # noqa: BLE001  the fault is the finding
        print("CHILD FAULT", args.j0, args.j1, type(e).__name__, str(e)[:300], flush=True)
        return FAULT
    print("CHILD ok", args.j0, args.j1, "count", r.count, "block_tasks", r.stats["block_tasks"],
          "blocks", r.stats["blocks"], flush=True)
    return 0


def launch(args, j0: int, j1: int, warp_tasks: str, blocks: int, timeout: float = 120) -> bool:
    """True when the run [j0, j1) faulted."""
    cmd = [sys.executable, __file__, args.graph, str(args.aw), "--child", str(j0), str(j1),
           "--warp-tasks", warp_tasks, "--blocks", str(blocks)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        print("TIMEOUT", j0, j1, flush=True)
        return False
    line = [x for x in r.stdout.splitlines() if x.startswith("CHILD")]
    print(f"[{j0}, {j1}) warp_tasks={warp_tasks} blocks={blocks}:",
          line[-1] if line else (r.stderr[-300:] or f"rc {r.returncode}"), flush=True)
    return r.returncode == FAULT


def parent(args) -> int:
    _, p, needs, order = block_order(args.graph, args.aw)
    n = int(order.size)
    print(f"{n} block-wide tasks, needs {int(needs[order[-1]])}..{int(needs[order[0]])}",
          flush=True)
    t0 = time.time()
    faulted = any(launch(args, 0, n, args.warp_tasks, args.blocks) for _ in range(args.tries))
    if not faulted:
        print("NO FAULT in", args.tries, "runs of all", n, "tasks", flush=True)
        return 0
    lo, hi = 0, n
    while hi - lo > 1 and time.time() - t0 < args.budget:
        mid = (lo + hi) // 2
        if any(launch(args, lo, mid, args.warp_tasks, args.blocks) for _ in range(args.tries)):
            hi = mid
        elif any(launch(args, mid, hi, args.warp_tasks, args.blocks) for _ in range(args.tries)):
            lo = mid
        else:
            print(f"neither half of [{lo}, {hi}) faults alone", flush=True)
            break
    found = []
    for j in range(lo, hi):
        i = int(order[j])
        alone_grid = launch(args, j, j + 1, "none", args.blocks)
        alone_one = launch(args, j, j + 1, "none", 1)
        found.append(dict(j=j, prepare_index=i, vertex=int(p.tasks[i]), deg=int(p.task_deg[i]),
                          wedges=int(p.task_wedges[i]), dv=int(p.task_dv[i]),
                          need=int(needs[i]), alone_full_grid_faults=alone_grid,
                          alone_one_block_faults=alone_one))
        print("FOUND", json.dumps(found[-1]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(dict(lo=lo, hi=hi, n=n, found=found), indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("aw", type=int)
    ap.add_argument("--child", nargs=2, type=int, metavar=("J0", "J1"))
    ap.add_argument("--warp-tasks", choices=("all", "none"), default="all")
    ap.add_argument("--blocks", type=int, default=0)
    ap.add_argument("--tries", type=int, default=2, help="launches per interval (races)")
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.child:
        args.j0, args.j1 = args.child
        return child(args)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
