"""cuMBE's maximality check with ``CUMBE_MULTILIST=1`` (several lists a barrier once the
running intersection is small; cumbe/kernel/maximality.py), in the simulator.

The random graphs of the oracle check start the rounds at once (their lists are short); the
graph here has candidate-side lists of about 34 vertices, so that the check intersects one list
a barrier first and switches to rounds on the way (threads=64: 32 lanes a warp, rounds from 16
vertices down), on a warp and block-wide."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys
import numpy as np
from cumbe import engine as cumbe_engine
from cumbe.selfcheck import block_arena
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

rng = np.random.default_rng(5)
for gi, (nl, nr, p) in enumerate(((40, 6, 0.85),)):
    m = rng.random((nl, nr)) < p
    l, r = np.nonzero(m)
    g = from_edges(l, r, nl, nr)
    want = list(count_and_fingerprint(g))
    base = dict(variant="cuMBE", threads=64, blocks=1, side="left", k=3)
    for name, extra in (("warp", {}), ("block-wide", dict(warp_arena_words=block_arena(g, base)))):
        res = cumbe_engine.run(g, **base, **extra)
        got = [res.count, res.fingerprint]
        print(json.dumps(dict(graph=gi, path=name, want=want, got=got)), flush=True)
        if got != want:
            sys.exit(3)
"""


def _simulate(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "CUMBE_"))}
    env.update(NUMBA_ENABLE_CUDASIM="1", CUMBE_MULTILIST="1",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *code, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.mark.cudasim
def test_rounds_after_single_lists_match_the_oracle():
    p = _simulate(["-c", CHILD])
    runs = [json.loads(ln) for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert p.returncode == 0, (runs[-1:], p.stderr[-3000:])
    assert len(runs) == 2


@pytest.mark.cudasim
def test_rounds_from_the_start_match_the_oracle_on_random_graphs():
    p = _simulate(["-m", "cumbe.selfcheck"], "--simulator", "--examples", "4", "--dense", "1")
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout.splitlines()[-1])["ok"] is True
