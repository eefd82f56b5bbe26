"""The cuMBE-dense variant (cumbe/kernel/dense.py) against the brute-force oracle, on graphs
that force its dense leaf search: crowns, dense blocks, near-bicliques planted in a sparse
graph, and nodes whose L' has exactly 32 vertices (the widest a mask holds) and 33 (the
generic search).  numba's CUDA simulator, one block of two warps, in a child process (as in
test_cumbe_sim.py); whole, with work stolen, and block-wide."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
np.seterr(all="ignore")
from cumbe.engine import run
from cumbe.selfcheck import block_arena
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

def crown(n, extra=0):
    left, right = np.nonzero(~np.eye(n, n + extra, dtype=bool))
    return left, right

def wide(width, seed):
    # task of vertex 0: L = a core of `width` right vertices and a band of 8; vertex 1 (the
    # core and private ones: the first candidate chosen, |N(1) ∩ L| = width) has the child
    # L' = the core, where five more vertices (most of the core, the band and private ones)
    # are partial: the dense search's root has |L'| = width
    rng = np.random.default_rng(seed)
    m = np.zeros((7, width + 8 + 6 * 12), dtype=bool)
    m[0, :width + 8] = True
    m[1, :width] = True
    m[2:, :width] = rng.random((5, width)) < 0.85
    m[2:, width:width + 8] = True
    for i in range(1, 7):
        m[i, width + 8 + 12 * (i - 1):width + 8 + 12 * i] = True
    return np.nonzero(m)

def planted(seed):
    rng = np.random.default_rng(seed)
    m = rng.random((14, 14)) < 0.12
    for _ in range(3):
        a = rng.choice(14, 5, replace=False)
        b = rng.choice(14, 6, replace=False)
        m[np.ix_(a, b)] |= rng.random((5, 6)) < 0.85
    return np.nonzero(m)

graphs = {
    "crown-7": crown(7),
    "crown-6x7": crown(6, 1),
    "dense-8x9": np.nonzero(np.random.default_rng(5).random((8, 9)) < 0.75),
    "planted-1": planted(1),
    "planted-2": planted(2),
    "wide-32": wide(32, 3),
    "wide-33": wide(33, 3),
}
out = []
for name, (l, r) in graphs.items():
    l = np.asarray(l)
    r = np.asarray(r)
    g = from_edges(l, r, int(l.max()) + 1, int(r.max()) + 1)
    want = count_and_fingerprint(g)
    base = dict(variant="cuMBE-dense", threads=64, side="left", k=3)
    # whole, stolen from (the eager stop signal), and block-wide (no dense search there)
    extras = [{}, {"eager_steal": 1}]
    if name in ("crown-7", "planted-1"):
        extras.append({"warp_arena_words": block_arena(g, base), "eager_steal": 1})
    for extra in extras:
        res = run(g, **base, **extra)
        out.append(dict(graph=name, extra=sorted(extra), want=list(want),
                        got=[res.count, res.fingerprint], nodes=res.stats["nodes"]))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=1200)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.cudasim
@pytest.mark.parametrize("graph", ["crown-7", "crown-6x7", "dense-8x9", "planted-1",
                                   "planted-2", "wide-32", "wide-33"])
def test_the_dense_variant_matches_the_oracle(runs, graph):
    got = [r for r in runs if r["graph"] == graph]
    assert len(got) == (3 if graph in ("crown-7", "planted-1") else 2)
    for r in got:
        assert r["got"] == r["want"], r


def test_the_dense_variant_is_its_own_build_and_column():
    """The paper's four variants keep their switches; cuMBE-dense is cuMBE plus the dense
    leaf search, a build of its own (the kernel key differs), and it needs reverse scanning."""
    from cumbe.spec import SPEC
    from cumbe.variants import ABLATIONS, DENSE, PAPER, build_switches

    assert PAPER == ("cuMBE", "noRS", "noES", "noWS") and DENSE == {"cuMBE-dense"}
    assert {v: ABLATIONS[v] for v in PAPER} == {"cuMBE": (True, True, True),
                                                "noRS": (False, True, True),
                                                "noES": (True, False, True),
                                                "noWS": (True, True, False)}
    assert build_switches("cuMBE-dense") == {"rs": True, "es": True, "ws": True, "dense": True}
    assert not any(build_switches(v)["dense"] for v in PAPER)
    param = next(p for p in SPEC.params if p.name == "variant")
    assert "cuMBE-dense" in param.choices
