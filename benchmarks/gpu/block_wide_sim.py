"""A graph's block-wide tasks one at a time in numba's CUDA simulator, whose numpy arrays
check every index: the search for the device fault of benchmarks/gpu/rounds/7 and 8.

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/gpu/block_wide_sim.py .csr/marvel.csr 2496 [FIRST [COUNT]]

Tasks whose arena need exceeds ``warp_arena_words`` (2496 on Marvel: 512 tasks) run
block-wide, one per engine call (128 threads, one block), smallest need first, from the
FIRST-th for COUNT of them.  A task's count is its share of the bicliques only; the finding
is a FAULT line (an IndexError from the simulator).  46-134 s per small Marvel task on the 2-core machine.
"""

import sys
import time
import traceback
import warnings
from dataclasses import replace

import numpy as np

warnings.simplefilter("ignore")
np.seterr(all="ignore")
sys.path.insert(0, ".")
import cumbe.engine as E
from cumbe import layout
from cumbe.prepare import prepare as real_prepare
from mbebench.csr import read_csr


def main() -> int:
    g = read_csr(sys.argv[1])
    aw = int(sys.argv[2])
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
    p0 = real_prepare(g, "auto", True)
    needs = layout.needs(p0.task_deg, p0.task_wedges, p0.n_higher, p0.task_dv, True)
    big = np.nonzero(needs > aw)[0]
    order = big[np.argsort(needs[big], kind="stable")]
    print(f"{big.size} block-wide tasks, needs {int(needs[order[0]])}..{int(needs[order[-1]])}",
          flush=True)
    for j in range(first, min(order.size, first + count)):
        i = int(order[j])

        def one_task(graph, side, rs, i=i):
            p = real_prepare(graph, side, rs)
            sel = np.array([i])
            return replace(p, tasks=p.tasks[sel], task_deg=p.task_deg[sel],
                           task_wedges=p.task_wedges[sel], n_higher=p.n_higher[sel],
                           task_dv=p.task_dv[sel])

        E.prepare = one_task
        t0 = time.time()
        try:
            r = E.run(g, variant="cuMBE", threads=128, blocks=1, warp_arena_words=aw)
        except Exception as e:  # noqa: BLE001  the fault is the finding
            print(j, "task", i, "need", int(needs[i]), "FAULT", type(e).__name__, str(e)[:400],
                  flush=True)
            traceback.print_exc()
            return 1
        print(j, "task", i, "need", int(needs[i]), "count", r.count, "block_tasks",
              r.stats["block_tasks"], f"{time.time() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
