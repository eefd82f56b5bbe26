"""Where does a shard's time go?  One GPU, one graph: the whole run, then the same graph as
n shards one after another, each run as a multi-GPU worker runs it (one host preparation,
``cumbe.engine.run(graph, prepared=take(...))``).

    python benchmarks/multi-gpu/shard_cost.py G.csr --shards 16,8,4 --out shard_cost.json

Per run it records the wall time of the call and the engine's own split of it (``prepare_s``:
the shard's selection; ``setup_s``: buffers and copies; ``kernel_s``: CUDA events), so that

* ``host_s`` = wall - kernel: what a shard costs beyond its kernel (setup, the wait for the
  kernel's end, the results' copy back);
* ``kernel_extra_s`` = the shards' kernel seconds summed - the whole run's: what the shard's
  own kernel costs beyond its share of the work (launch, start, the stealing tail).

``--k 24,48`` repeats everything for each number of stealing stages.  ``--poll 0.2,0.002`` repeats the first shard count with each longest poll of the kernel's end
(``cumbe.progress.POLL_S``) to show what the wait for the kernel's end costs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def _one(run, graph, prep, **params) -> dict:
    t = time.perf_counter()
    r = run(graph, prepared=prep, **params)
    wall = time.perf_counter() - t
    st = r.stats
    return {"count": int(r.count), "fp": int(r.fingerprint), "wall_s": wall,
            "kernel_s": float(st["kernel_s"]), "setup_s": float(st.get("setup_s", 0.0)),
            "prepare_s": float(st.get("prepare_s", 0.0)),
            "compile_s": float(st.get("compile_s", 0.0)), "tasks": int(st["n_tasks"])}


def _series(a, graph, prep, costs, k, E, P, PG, SH) -> list[dict]:
    """The whole run and every shard configuration, with ``k`` stealing stages."""
    poll0 = PG.POLL_S
    whole = _one(E.run, graph, prep, k=k)
    whole.update(config="whole", k=k, shards=1, poll_s=PG.POLL_S)
    rows = [whole]
    print(json.dumps(whole), flush=True)
    counts = [int(x) for x in a.shards.split(",") if x]
    configs = [(n, PG.POLL_S) for n in counts]
    if a.poll:
        configs = [(counts[0], float(p)) for p in a.poll.split(",")] + configs[1:]
    for n, poll in configs:
        PG.POLL_S = poll
        assign = SH.assign(costs, n)
        loads = np.bincount(assign, weights=costs.astype(np.float64), minlength=n)
        shard_rows = [_one(E.run, graph, P.take(prep, np.flatnonzero(assign == s)), k=k)
                      for s in sorted(range(n), key=lambda s: (-loads[s], s))]
        tot = {key: sum(r[key] for r in shard_rows) for key in
               ("wall_s", "kernel_s", "setup_s", "prepare_s", "compile_s")}
        count = sum(r["count"] for r in shard_rows)
        fp = sum(r["fp"] for r in shard_rows) % 2**64
        row = {"config": f"{n} shards", "k": k, "shards": n, "poll_s": poll, "count": count,
               "fp": fp, **tot, "host_s": tot["wall_s"] - tot["kernel_s"],
               "host_per_shard_s": (tot["wall_s"] - tot["kernel_s"]) / n,
               "kernel_extra_s": tot["kernel_s"] - whole["kernel_s"],
               "kernel_extra_per_shard_s": (tot["kernel_s"] - whole["kernel_s"]) / n,
               "equal": count == whole["count"] and fp == whole["fp"],
               "per_shard": shard_rows}
        rows.append(row)
        print(json.dumps({key: v for key, v in row.items() if key != "per_shard"}), flush=True)
    PG.POLL_S = poll0
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("csr")
    ap.add_argument("--shards", default="16,8,4")
    ap.add_argument("--poll", default="", help="longest polls (s) to compare at the first count")
    ap.add_argument("--k", default="24", help="stealing stages to compare (comma list)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    from cumbe import engine as E
    from cumbe import prepare as P
    from cumbe import progress as PG
    from mbebench import shard as SH
    from mbebench.csr import read_csr

    graph = read_csr(a.csr)
    prep = E.prepare_for(graph)
    costs = P.task_costs(prep)
    rows = []
    for k in [int(x) for x in a.k.split(",") if x]:
        rows += _series(a, graph, prep, costs, k, E, P, PG, SH)
    Path(a.out).write_text(json.dumps(rows, indent=1))
    return 0 if all(r.get("equal", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
