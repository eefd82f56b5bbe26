"""Would arenas from a shared pool run more tasks at once under a cap?  Host only, no GPU.

    python benchmarks/memory-caps/pool_model.py G.csr [...] [--factors 1.25,1.5,2,3,5]

For caps at F times a graph's smallest cap: the plan :func:`cumbe.grid.choose` makes (every
warp's arena as large as the largest task it may run; block-wide tasks take a block), and a
pool that gives each running task its own need.  Over a run a task holds its need for about
its share of the time, which follows its estimated cost (:func:`cumbe.prepare.task_costs`), so
a pool of today's arena memory runs about (arena words of a half) / (the cost-weighted mean
need) tasks at once, at most the full grid's warps.  The gain is that over today's warps; it
counts every warp as running a task, so where a block-wide task holds four it understates the
gain (by up to 1 / (1 - 3s/4), s the block-wide tasks' share of the time).  Measured
time falls in proportion to the workers until the GPU saturates
(``results/2026-11-26-from-smallest/``), so the gain bounds what a pool could buy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cumbe import buffers as B  # noqa: E402
from cumbe import engine as E  # noqa: E402
from cumbe import grid as GR  # noqa: E402
from cumbe import prepare as PR  # noqa: E402

FREE = 80 << 30  # an H100's memory: every cap below it binds


def pool_rows(graph, factors, max_blocks: int = 1056, warps: int = 4) -> list[dict]:
    prep = E.prepare_for(graph)
    needs = E.task_needs(prep, True)
    cost = PR.task_costs(prep).astype(float)
    wmean = float((needs * cost).sum() / cost.sum())
    base = B.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), 24, max_blocks,
                  warps, 2)
    smallest = E.smallest_memory_gib(graph, threads=32 * warps, prepared=prep)
    rows = []
    for f in factors:
        bud = GR.budget(FREE, int(smallest * f * 2**30))
        plan = GR.choose(needs, base, max_blocks, bud).plan
        # the same arena memory as today's plan, shared (a worker's other buffers are a few
        # words: left out)
        pool = min(max_blocks * warps, plan.half_words / wmean)
        rows.append(dict(factor=f, cap_gib=smallest * f, blocks=plan.blocks,
                         today_warps=plan.workers, weighted_need=wmean,
                         pool_tasks=pool, gain=pool / plan.workers))
    return rows


def main(argv=None) -> int:
    from mbebench.csr import read_csr

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--factors", default="1.25,1.5,2,3,5")
    a = ap.parse_args(argv)
    factors = [float(x) for x in a.factors.split(",")]
    print("| graph | cost-weighted need | " + " | ".join(f"x{f:g}" for f in factors) + " |")
    print("|---|---|" + "---|" * len(factors))
    for p in a.graphs:
        rows = pool_rows(read_csr(p), factors)
        cells = [f"{r['today_warps']} warps, pool {r['pool_tasks']:.0f} ({r['gain']:.2f}x)"
                 for r in rows]
        print(f"| {Path(p).stem} | {rows[0]['weighted_need']:.0f} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
