"""The subtree estimates that the shards and the devices' queue balance by (cumbe.estimate):
a crown's first task holds half of it, which its wedges do not show."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from standins import crown_union, crowns  # noqa: E402


@pytest.fixture(scope="module")
def union():
    from cumbe import single_device

    ns = [14, 12, 11, 10, 9, 8]
    return ns, single_device.prepare_for(crowns(ns))


def test_a_crowns_first_task_is_estimated_near_its_true_share(union):
    from cumbe import estimate

    ns, prep = union
    cost, branches = estimate.task_costs(prep)
    default = (prep.task_wedges + prep.task_deg).astype(float)
    total = sum(2**n - 2 for n in ns)
    top = int(np.argmax(cost))
    # S_14's first task: half of S_14's bicliques
    truth = (2**13) / total
    share = cost[top] / cost.sum()
    assert truth / 1.6 < share < truth * 1.6, (share, truth)
    assert default[top] / default.sum() < truth / 4  # what the wedges alone say
    # its level-0 branches in the fixed order: each about half of what is left
    b = branches[top]
    assert b.size == 13
    assert 0.3 < b[0] / b.sum() < 0.7
    assert b[0] > b[1] > b[3] > b[6]
    again, _ = estimate.task_costs(prep)
    assert np.array_equal(again, cost)  # seeded: every process computes the same


def test_pieces_of_an_estimated_task_cost_what_their_branches_do(union):
    from cumbe.prepare import split, task_costs, with_estimates

    _, prep = union
    est = with_estimates(prep)
    assert est.task_cost is not None and est.branch_cost
    costs = task_costs(est)
    assert np.all(costs[:-1] >= costs[1:])  # largest first
    top = int(est.tasks[0])
    pieces = split(est, float(costs.sum()) / 8, 4)
    mine = np.flatnonzero(pieces.tasks == top)
    assert sorted(pieces.task_k[mine].tolist()) == list(range(pieces.task_nk[mine[0]]))
    pc = task_costs(pieces)[mine]
    assert pc.sum() == pytest.approx(costs[0], rel=1e-9)  # the pieces partition the task
    # piece 0 keeps the branches with 0 (mod K) after them: not an equal share
    assert pc.max() > 1.5 * pc.min()


def test_tasks_past_the_limits_keep_their_wedge_cost():
    from cumbe import estimate, single_device

    # one crown too wide for a 64-bit L: every task keeps wedges + degree
    prep = single_device.prepare_for(crown_union(70, 1))
    cost, branches = estimate.task_costs(prep)
    assert branches == {}
    assert np.array_equal(cost, (prep.task_wedges + prep.task_deg).astype(float))
