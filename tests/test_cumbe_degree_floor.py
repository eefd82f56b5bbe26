"""The maximality check's degree floor (:mod:`cumbe.degree_floor`, the rounds build): the
shortest list's vertices of degree below |L'| leave before any lookup.  Its table on the
host, its 32-way search in numba's CUDA simulator, and the engine against the oracle on
graphs whose lists start with long runs of low-degree vertices (one search step and two).
tools/mutations.toml lists the breaks these tests catch."""

from __future__ import annotations

import json

import numpy as np
import pytest
from simulated import run_simulated

from cumbe import degree_floor
from cumbe.consts import DEGT, NPARAMS, P_DEGT


def test_the_table_holds_the_first_rank_of_each_degree():
    deg = np.array([0, 1, 1, 3, 3, 3, 7, 5000])
    offU = np.concatenate([[0], np.cumsum(deg)])
    prm = degree_floor.params(offU)
    assert prm.shape == (NPARAMS,) and not prm[:P_DEGT].any()
    table = prm[P_DEGT:]
    for d in range(DEGT + 1):
        want = next((r for r, x in enumerate(deg) if x >= d), deg.size)
        assert table[d] == want, d
    # one vertex's degree is past DEGT: |L'| beyond DEGT takes the floor of DEGT, lower
    assert table[7] == 6 and table[8] == 7 and table[DEGT] == 7


def test_candidates_out_of_degree_order_are_refused():
    with pytest.raises(ValueError, match="degree order"):
        degree_floor.params(np.array([0, 3, 4, 8]))


SEARCH = r"""
import json
import numpy as np
from numba import cuda
from cumbe.kernel.consts import WARP, Build, Group
from cumbe.kernel.maximality import make_maximality
from cumbe.kernel.sync import wsync

cfg = Build(True, True, True, False, WARP, cuda.jit(device=True), rounds=True, hubs=True)
below = make_maximality(cfg, Group(WARP, wsync)).below_degree_floor

@cuda.jit
def k(adj, los, ns, keys, out):
    gl = cuda.threadIdx.x
    for i in range(keys.shape[0]):
        r = below(adj, los[i], ns[i], keys[i], gl)
        if gl == 0:
            out[i] = r

rng = np.random.default_rng(4)
parts, los, ns, keys, want = [], [], [], [], []
pos = 0
for n in list(range(0, 70)) + [1023, 1024, 1025, 1500]:
    lst = np.sort(rng.choice(5000, n, replace=False)).astype(np.int32)
    parts.append(lst)
    for key in {0, 1, 4999, 5000, int(rng.integers(0, 5000))} | set(lst[::97].tolist()):
        los.append(pos)
        ns.append(n)
        keys.append(key)
        want.append(int(np.searchsorted(lst, key, side="left")))
    pos += n
adj = np.concatenate(parts)
los = np.array(los, np.int64)
ns = np.array(ns, np.int32)
keys = np.array(keys, np.int32)
out = np.full(keys.size, -1, np.int64)
k[1, WARP](adj, los, ns, keys, out)
print(json.dumps(dict(got=out.tolist(), want=want, longest=int(ns.max()))))
"""


@pytest.mark.cudasim
def test_the_32_way_search_finds_the_first_vertex_at_the_floor():
    p = run_simulated(SEARCH, 600)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["longest"] > 1024  # three steps of 32 ways
    assert len(r["got"]) > 200 and r["got"] == r["want"]


ENGINE = r"""
import json
import numpy as np
from cumbe import engine
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

out = []
for seed, leaves in ((1, 40), (2, 200)):
    rng = np.random.default_rng(seed)
    # a dense core of 10 x 6, then leaves of degree 1 to 3 on the 6 core vertices of the
    # other side: their lists start with runs of low-degree candidates (those of degree 2
    # or less over 32 in the second graph: two search steps at an L' of 3)
    m = np.zeros((10 + leaves, 6), bool)
    m[:10] = rng.random((10, 6)) < 0.8
    for i in range(10, 10 + leaves):
        m[i, rng.choice(6, int(rng.integers(1, 4)), replace=False)] = True
    g = from_edges(*np.nonzero(m), n_left=m.shape[0], n_right=6)
    for hub_divisor in (64, 0):
        res = engine.run(g, threads=64, k=3, side="left", rounds=True, hub_divisor=hub_divisor,
                         eager_steal=1)
        want = count_and_fingerprint(g)
        out.append(dict(seed=seed, hub_divisor=hub_divisor, want=[want[0], want[1]],
                        got=[res.count, res.fingerprint],
                        low=int(max(np.count_nonzero(m[:, v] & (m.sum(1) <= 2))
                                    for v in range(6)))))
print(json.dumps(out))
"""


@pytest.mark.cudasim
def test_the_engine_with_the_floor_matches_the_oracle():
    p = run_simulated(ENGINE, 1200)
    assert p.returncode == 0, p.stderr[-3000:]
    runs = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(runs) == 4 and max(r["low"] for r in runs) > 32
    for r in runs:
        assert r["got"] == r["want"], r
