"""How the work of a graph spreads over its first-level tasks, and whether cuMBE's host
estimate names the costly ones.

    python benchmarks/cpu/task_work.py GRAPH.csr [--json OUT.jsonl]

ParMBE's search with work counters (``work_analysis``'s variant ``P``: the same rank order and
candidate side as cuMBE's) runs each first-level task alone; a task's work is its nodes plus its
closure tests' reads (the counters ``nodes`` and ``closure`` of ``baselines._work``). The tasks
are then ranked twice, by that work and by cuMBE's estimated cost (``cumbe.estimate.task_costs``,
what the task order, the shards and the pieces use), and for the top 0.1 %, 1 % and 5 % of the
tasks the line gives the share of the whole work each ranking's top holds (the tasks' counts add
up to a whole run's: tests/test_work_kernels.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import work_analysis as wa

from baselines import parmbe_plan
from baselines._work import COUNTERS, new_counters
from cumbe import estimate
from cumbe.single_device import prepare_for
from mbebench.csr import CSRGraph, read_csr

TOPS = (0.001, 0.01, 0.05)


def per_task(graph: CSRGraph) -> dict:
    """Each first-level task's bicliques and work (ParMBE, alone), by candidate vertex."""
    fam, spec = wa.parse_variant("P")
    left, c_off, c_idx, l_off, l_idx, rank = wa.candidate_arrays(graph, fam, spec)
    rank = rank.astype(np.int32)
    search = wa.parmbe_build(spec)
    verts = wa.parmbe_tasks(c_off, np.argsort(rank).astype(np.int32))
    cnt, slot, touched, buf = parmbe_plan.new_scratch(c_off, l_off)
    ctr = new_counters()
    nodes_i, closure_i = COUNTERS.index("nodes"), COUNTERS.index("closure")
    one = np.ones(1, np.int32)
    bic = np.zeros(verts.size, np.int64)
    work = np.zeros(verts.size, np.int64)
    for i in range(verts.size):
        before = ctr[nodes_i] + ctr[closure_i]
        c, _ = search(c_off, c_idx, l_off, l_idx, rank, verts[i:i + 1], one - 1, one, left, cnt,
                      slot, touched, buf, ctr)
        bic[i], work[i] = c, ctr[nodes_i] + ctr[closure_i] - before
    return {"left": left, "verts": verts, "bicliques": bic, "work": work}


def estimated(graph: CSRGraph, left: bool, verts: np.ndarray) -> np.ndarray:
    """cuMBE's estimated cost of each task in ``verts`` (candidate ids of the CSR)."""
    prep = prepare_for(graph, "cuMBE", "left" if left else "right")
    cost, _ = estimate.task_costs(prep)
    by_vertex = np.zeros(prep.orig.size)
    by_vertex[prep.orig[prep.tasks]] = cost
    return by_vertex[verts]


def shares(work: np.ndarray, est: np.ndarray) -> dict:
    """For each top fraction of the tasks: the share of the work the costliest hold, and the
    share the tasks the estimate ranks highest hold."""
    total = float(work.sum()) or 1.0
    by_work = np.sort(work)[::-1]
    by_est = work[np.argsort(-est, kind="stable")]
    out = {}
    for frac in TOPS:
        k = max(1, int(frac * work.size))
        out[f"top {frac:g}"] = {"tasks": k, "work_share": round(by_work[:k].sum() / total, 3),
                                "estimate_top_share": round(by_est[:k].sum() / total, 3)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("--json", help="append the line to this JSONL file")
    a = ap.parse_args(argv)
    g = read_csr(a.graph)
    t0 = time.perf_counter()
    t = per_task(g)
    secs = time.perf_counter() - t0
    est = estimated(g, t["left"], t["verts"])
    line = {"graph": Path(a.graph).stem, "tasks": int(t["verts"].size),
            "bicliques": int(t["bicliques"].sum()), "work": int(t["work"].sum()),
            "seconds": round(secs, 1), **shares(t["work"], est)}
    print(json.dumps(line))
    if a.json:
        with open(a.json, "a") as f:
            f.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
