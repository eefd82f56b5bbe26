"""A graph's block-wide tasks one at a time in numba's CUDA simulator, whose numpy arrays
check every index: the search for the device fault of benchmarks/archive/gpu/rounds/7 and 8.

    NUMBA_ENABLE_CUDASIM=1 python benchmarks/archive/gpu-debug/block_wide_sim.py .csr/marvel.csr 2496 [FIRST [COUNT]]

Tasks whose arena need exceeds ``warp_arena_words`` (2496 on Marvel: 512 tasks) run
block-wide, one per engine call (128 threads, one block), smallest need first, from the
FIRST-th for COUNT of them.  A task's count is its share of the bicliques only; the finding
is a FAULT line (an IndexError from the simulator).  46-134 s per small Marvel task on the
2-core machine; the task that faults on the device (round 9) ran 25 min without finishing.
"""

import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
np.seterr(all="ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from block_wide_bisect import block_order, run_only_tasks

import cumbe.engine as E  # (block_wide_bisect puts the repo on the path)


def main() -> int:
    aw = int(sys.argv[2])
    first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
    g, _, needs, order = block_order(sys.argv[1], aw)
    order = order[::-1]  # smallest need first
    print(f"{order.size} block-wide tasks, needs {int(needs[order[0]])}..{int(needs[order[-1]])}",
          flush=True)
    for j in range(first, min(order.size, first + count)):
        i = int(order[j])
        run_only_tasks([i])
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
