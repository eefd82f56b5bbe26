"""The maximality check in rounds (``rounds``, :mod:`cumbe.kernel.maximality`) against
the oracle, in numba's CUDA simulator (one block of two warps; a child process, as in
test_cumbe_paths.py), on graphs that force each of its steps: neighbour lists longer than a
warp (the running intersection in several chunks, one list a round before R' is taken out;
lists of over four chunks, the shortest read where it lies),
short ones (R' out at once, several lists a round), vertices whose neighbourhood contains a
task root's (R' at the root holds more than the root), stolen nodes (R' copied from the
victim), tasks in pieces and block-wide tasks whose L' spans both warps of the block (their
warps' shuffled sums meet in one shared word); the lists looked up in hub bit rows (every list on these small
graphs, by default), in none (``hub_divisor`` 0) and in some (``mixed``: rows only for its
long lists).  tools/mutations.toml lists the breaks these runs catch."""

from __future__ import annotations

import json

import numpy as np
import pytest
from simulated import run_simulated

CHILD = r"""
import json
import numpy as np
from cumbe import engine
from cumbe.prepare import split
from cumbe.selfcheck import block_arena
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

rng = np.random.default_rng(2)
# lists of about 34 on the 7 side: the intersection starts above a warp's 32 lanes (drawn
# from 8 x 60 numbers, so that the graphs below stay what they were)
m = rng.random((8, 60))[:7, :44] < 0.78
long_lists = np.nonzero(m)
# short lists, dense: deep trees, R' out at once, several lists a round; columns 6 and 7
# contain column 5's neighbourhood and column 8 equals it (absorbed at the root, a twin)
m = rng.random((9, 9)) < 0.55
m[:, 6] |= m[:, 5]
m[:, 7] |= m[:, 5]
m[:, 8] = m[:, 5]
short_lists = np.nonzero(m)
# 96 candidates (3 words a row): with hub_divisor 1 a list of 3 or more gets a row, the
# right side's sparse half (about 1.4 each) keeps its lists
p = np.where(np.arange(16) % 2 == 0, 0.3, 0.015)
m = rng.random((96, 16)) < p
mixed = np.nonzero(m)
# 6 x 72 at density 0.9: two vertices of the 6 side share about 58 neighbours
m = np.random.default_rng(5).random((6, 72)) < 0.9
wide = np.nonzero(m)
# 6 x 200 at density 0.7 (the 6 side's lists of about 140): the check's first list is read
# where it lies (its running intersection over 32 above R'), four chunks of 32 a step
# against a hub row, then the chunks left one at a time; without rows (hub_divisor 0) one
# chunk a step
m = np.random.default_rng(5).random((6, 200)) < 0.7
deep = np.nonzero(m)
graphs = {"long": from_edges(*long_lists, n_left=7, n_right=44),
          "deep": from_edges(*deep, n_left=6, n_right=200),
          "wide": from_edges(*wide, n_left=6, n_right=72),
          "short": from_edges(*short_lists, n_left=9, n_right=9),
          "mixed": from_edges(*mixed, n_left=96, n_right=16)}
runs = [("long", "right", {}), ("long", "left", {"eager_steal": 1}),
        ("short", "right", {"eager_steal": 1}), ("short", "left", {}),
        ("short", "right", {"pieces": 3, "eager_steal": 1}),
        ("long", "right", {"hub_divisor": 0}), ("short", "left", {"hub_divisor": 0}),
        ("mixed", "left", {"hub_divisor": 1, "eager_steal": 1}),
        # block-wide tasks (two warps each), stealing, whose L' runs past a warp's 32 lanes
        # (about 50 of 72), so that each warp adds its own part of the L sum
        ("wide", "left", {"block_wide": 1, "eager_steal": 1}),
        ("deep", "right", {"eager_steal": 1}), ("deep", "right", {"hub_divisor": 0})]
out = []
for name, side, extra in runs:
    g = graphs[name]
    kw = dict(extra)
    if kw.pop("pieces", 0):
        kw["prepared"] = split(engine.prepare_for(g, "cuMBE", side), 1.0, 3)
    if kw.pop("block_wide", 0):
        kw["warp_arena_words"] = block_arena(g, dict(variant="cuMBE", side=side, threads=64))
    res = engine.run(g, threads=64, k=3, side=side, rounds=True, **kw)
    want = count_and_fingerprint(g)
    out.append(dict(graph=name, side=side, extra=sorted(extra), want=[want[0], want[1]],
                    got=[res.count, res.fingerprint], tasks_run=res.stats["tasks_run"],
                    n_tasks=res.stats["n_tasks"], block_tasks=res.stats["block_tasks"],
                    block_tasks_run=res.stats["block_tasks_run"], task_pieces=res.stats["task_pieces"],
                    hub_rows=res.stats["hub_rows"], n_v=g.n_right if side == "left" else g.n_left,
                    short_v=int(np.count_nonzero(np.diff(g.right_offsets if side == "left"
                                                         else g.left_offsets) < 3))))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs():
    p = run_simulated(CHILD, 1800)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.cudasim
def test_the_check_in_rounds_matches_the_oracle(runs):
    assert len(runs) == 11
    for r in runs:
        assert r["got"] == r["want"], r


@pytest.mark.cudasim
def test_its_lists_ran_with_hub_rows_without_and_mixed(runs):
    rows = {(r["graph"], r["side"], tuple(r["extra"])): r for r in runs}
    assert rows[("long", "right", ())]["hub_rows"] == rows[("long", "right", ())]["n_v"]
    assert rows[("long", "right", ("hub_divisor",))]["hub_rows"] == 0
    mixed = rows[("mixed", "left", ("eager_steal", "hub_divisor"))]
    assert 0 < mixed["short_v"] < mixed["n_v"]
    assert mixed["hub_rows"] == mixed["n_v"] - mixed["short_v"]


@pytest.mark.cudasim
def test_its_stolen_nodes_and_pieces_ran(runs):
    # R' of a stolen node is copied from its victim: a run where nothing was stolen would
    # not check that
    assert any(r["tasks_run"] > r["n_tasks"] for r in runs if "eager_steal" in r["extra"])
    assert any(r["task_pieces"] > 0 for r in runs if "pieces" in r["extra"])


@pytest.mark.cudasim
def test_its_block_wide_tasks_ran_and_stole(runs):
    # a block's warps each add their shuffled sum to the block's shared word: a run
    # without block-wide tasks would not check that
    wide = [r for r in runs if "block_wide" in r["extra"]]
    assert wide and all(r["block_tasks"] > 0 for r in wide)
    assert any(r["block_tasks_run"] > r["block_tasks"] for r in wide)


BALLOT = r"""
import numpy as np
from numba import cuda
from cumbe.kernel.sync import ballot

@cuda.jit
def k(out):
    lane = cuda.threadIdx.x
    out[lane] = ballot(lane == 0 or lane == 31)

out = np.zeros(32, np.int64)
k[1, 32](out)
print(sorted(set(out.tolist())))
"""


POPC = r"""
import numpy as np
from numba import cuda
import cumbe.kernel.sync  # noqa: F401  (its simulator patches)

@cuda.jit
def k(v64, v32, out):
    i = cuda.threadIdx.x
    out[i] = cuda.popc(v64[i])
    out[4 + i] = cuda.popc(v32[i])

v64 = np.array([-1, -2**63, -(2**32), 5], np.int64)
v32 = np.array([-1, -2**31, -256, 5], np.int32)
out = np.zeros(8, np.int64)
k[1, 4](v64, v32, out)
print(out.tolist())
"""


REDUCE = r"""
import numpy as np
from numba import cuda
from cumbe.kernel.sync import warp_min, warp_sum

@cuda.jit
def k(vals, sums, mins):
    t = cuda.threadIdx.x
    sums[t] = warp_sum(vals[t])
    mins[t] = warp_min(np.int64(vals[t] % np.uint64(1000)) - 500)

vals = np.random.default_rng(3).integers(0, 2**64, 64, dtype=np.uint64)
sums = np.zeros(64, np.uint64)
mins = np.zeros(64, np.int64)
k[1, 64](vals, sums, mins)
want_s = [int(vals[w * 32:(w + 1) * 32].sum(dtype=np.uint64)) for w in range(2)]
want_m = [int((vals[w * 32:(w + 1) * 32] % 1000).astype(np.int64).min()) - 500 for w in range(2)]
print([sorted(set(sums[w * 32:(w + 1) * 32].tolist())) == [want_s[w]] for w in range(2)]
      + [sorted(set(mins[w * 32:(w + 1) * 32].tolist())) == [want_m[w]] for w in range(2)])
"""


@pytest.mark.cudasim
def test_the_simulators_warp_sums_and_minima_are_each_warps_own():
    """Every lane of a warp gets its warp's sum (mod 2**64) and minimum, not another warp's."""
    p = run_simulated(REDUCE, 300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.strip().splitlines()[-1].lower()) == [True] * 4


@pytest.mark.cudasim
def test_the_simulators_ballot_is_signed_as_numbas():
    """numba types ballot_sync as int32, so lane 31's vote is the sign bit on the device: the
    simulator's stand-in must give the same word to every lane (a kernel that widened it
    without masking counted 236 bicliques for 212, on a GPU only, until it did)."""
    p = run_simulated(BALLOT, 300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.strip().splitlines()[-1]) == [
        int(np.uint32(0x80000001).view(np.int32))]


@pytest.mark.cudasim
def test_the_simulators_popc_counts_the_twos_complement_bits():
    """The device counts the bits of a negative word as stored (64 for -1 in 64 bits); numba's
    simulator counted those of its absolute value (1 for -1), so a kernel whose 64-bit masks
    reach bit 63 miscounted there only (122 bicliques for 127 in a trial of 128 lookups a
    round)."""
    p = run_simulated(POPC, 300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.strip().splitlines()[-1]) == [64, 1, 32, 2, 32, 1, 24, 2]
