"""cuMBE's maximality check without its buffer (issue 33, break 2).

The check copies the shortest neighbour list of L' into a buffer of at most
``cumbe.layout.CB_CAP`` (8192) words; when every list of L' is longer it tests each vertex
of the shortest list against all the others, unbuffered.  No graph small enough for the
oracle reaches that path, so here the simulator runs with ``MBEBENCH_TEST_CB_CAP=0`` (honoured
only in the simulator): the buffer holds nothing and every check that does not end at
once takes the unbuffered path, on a warp and block-wide, with and without stealing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from simulated import run_simulated

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys
import numpy as np
from cumbe import engine as cumbe_engine
from cumbe import layout
from cumbe.selfcheck import block_arena
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

assert layout.CB_CAP == 0, layout.CB_CAP
rng = np.random.default_rng(3)
for gi, (nl, nr, p) in enumerate(((7, 8, 0.6), (8, 7, 0.5), (6, 9, 0.7))):
    m = rng.random((nl, nr)) < p
    m[0, :] = True  # a hub: long lists everywhere below it
    l, r = np.nonzero(m)
    g = from_edges(l, r, nl, nr)
    want = list(count_and_fingerprint(g))
    base = dict(variant="cuMBE", threads=64, blocks=1, side="left", k=3)
    for name, extra in (("warp", {}), ("warp-steal", dict(eager_steal=1)),
                        ("block-wide", dict(warp_arena_words=block_arena(g, base)))):
        res = cumbe_engine.run(g, **base, **extra)
        got = [res.count, res.fingerprint]
        # one line per run, at once: the test stops at the first wrong one
        print(json.dumps(dict(graph=gi, path=name, want=want, got=got,
                              block_tasks=res.stats["block_tasks"])), flush=True)
        if got != want:
            sys.exit(3)
"""


@pytest.mark.cudasim
def test_the_unbuffered_maximality_check_matches_the_oracle():
    p = run_simulated(CHILD, 600, clean_numba=True, MBEBENCH_TEST_CB_CAP="0")
    runs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert p.returncode == 0, (runs[-1:], p.stderr[-3000:])
    assert len(runs) == 9 and all(r["got"] == r["want"] for r in runs), runs
    assert all(r["want"][0] > 3 for r in runs)  # graphs with something to check
    assert all(r["block_tasks"] >= 1 for r in runs if r["path"] == "block-wide")


def test_the_test_cap_is_ignored_outside_the_simulator():
    # a GPU build keeps its buffer whatever the environment says
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(MBEBENCH_TEST_CB_CAP="0",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", "from cumbe import layout; print(layout.CB_CAP)"],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stdout.split() == ["8192"], p.stderr[-2000:]
