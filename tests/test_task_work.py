"""benchmarks/cpu/task_work.py: the tasks run one at a time add up to the whole search (its
bicliques, the oracle's count; its work, the whole run's counters), and the shares rank as
they say."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "cpu"))

import task_work
import work_analysis

from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

pytestmark = pytest.mark.slow  # compiles the counters' build of ParMBE's kernel


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_the_tasks_add_up_to_the_whole_search(seed):
    rng = np.random.default_rng(seed)
    m = rng.random((12, 15)) < 0.45
    m[:, 3] = m[:, 4]  # twins
    g = from_edges(*np.nonzero(m), 12, 15)
    t = task_work.per_task(g)
    whole = work_analysis.run_variant(g, "P")
    assert int(t["bicliques"].sum()) == count_and_fingerprint(g)[0] == whole["count"]
    assert int(t["work"].sum()) == whole["counters"]["nodes"] + whole["counters"]["closure"]
    est = task_work.estimated(g, t["left"], t["verts"])
    assert est.shape == t["verts"].shape and (est >= 0).all() and est.max() > 0


def test_the_shares_rank_by_work_and_by_estimate():
    work = np.array([50, 30, 10, 5, 5] + [0] * 995)
    est = np.arange(1000, 0, -1, dtype=float)  # the estimate ranks task 0 first, then 1, ...
    est[0], est[4] = est[4], est[0]  # ... but puts task 4 (work 5) in task 0's place
    s = task_work.shares(work, est)
    assert s["top 0.001"] == {"tasks": 1, "work_share": 0.5, "estimate_top_share": 0.05}
    assert s["top 0.01"]["work_share"] == 1.0
    assert s["top 0.01"]["estimate_top_share"] == 1.0
