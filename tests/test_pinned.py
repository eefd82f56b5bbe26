"""Pinned counts and fingerprints (issue 21, finding 2).

Every engine is compared with the oracle elsewhere, and the oracle computes its
fingerprint with the same ``mbebench.fingerprint`` the engines use: a change to the
definition (a constant, a mixer step, the side encoding) passes every such test and
silently breaks the comparison with every recorded result (benchmarks/, published
rows).  These literals were computed once, by the brute-force oracle, with the
definition in the docstring of ``mbebench/fingerprint.py``; every engine must give
them.  Do not update them to make a test pass: a new definition means new reference
values for every recorded result too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import edge_text, reference

from mbebench import csr, oracle
from mbebench.fingerprint import fingerprint_py, to_hex

REPO = Path(__file__).resolve().parents[1]

# dataset of .test/ -> (count, fingerprint)
TEST_GRAPHS = {
    "paper-fig1": (9, "0xbcd9163dc911ad7d"),
    "crown-8": (254, "0x1f457406d3c6b60e"),
    "complete-4x5": (1, "0xc7e6c83c9e92644f"),
    "random-shared-ids": (36, "0x891ec9386a96270d"),
    "hubs": (15, "0xb8056bb976acbf43"),
}
# (seed, n_left, n_right, edge draws) of lcg_graph -> (count, fingerprint)
RANDOM_GRAPHS = {
    (1, 9, 9, 30): (14, "0xc6494e3c39d4d70d"),
    (2, 11, 7, 25): (10, "0x17b2863dcfa82388"),
    (3, 6, 11, 20): (9, "0x957d77010a6fb666"),
    (4, 12, 12, 60): (43, "0x8c119469d649b765"),
    (5, 16, 14, 90): (71, "0xa55ec28dfbb50ab7"),
}
# small enough for cuMBE in the CUDA simulator (every GPU thread runs in Python)
SIMULATED = ["paper-fig1", "complete-4x5", "hubs", (2, 11, 7, 25), (3, 6, 11, 20)]


def lcg_edges(seed: int, n_left: int, n_right: int, m: int) -> tuple[list[int], list[int]]:
    """m edge draws from a 64-bit LCG (Knuth's MMIX constants): the same graph on every
    machine and numpy version, unlike a numpy generator's stream."""
    x, left, right = seed, [], []
    for _ in range(m):
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        left.append((x >> 33) % n_left)
        x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
        right.append((x >> 33) % n_right)
    return left, right


def _graph(key):
    if isinstance(key, tuple):
        left, right = lcg_edges(*key)
        return csr.from_edges(left, right, key[1], key[2])
    cfg = yaml.safe_load((REPO / ".test/config/config.yaml").read_text())
    return reference(edge_text(REPO / ".test", key, cfg["datasets"][key]))[0]


PINNED = {**TEST_GRAPHS, **RANDOM_GRAPHS}
IDS = [k if isinstance(k, str) else f"lcg{k[0]}" for k in PINNED]


@pytest.fixture(scope="module")
def graphs():
    return {key: _graph(key) for key in PINNED}


def _check(result_count, result_fp, key):
    count, fp = PINNED[key]
    assert (result_count, to_hex(result_fp)) == (count, fp), key


@pytest.mark.parametrize("key", PINNED, ids=IDS)
def test_oracle_and_python_fingerprint(graphs, key):
    g = graphs[key]
    _check(*oracle.count_and_fingerprint(g), key)
    found = oracle.maximal_bicliques(g)
    _check(len(found), fingerprint_py(found), key)


@pytest.mark.parametrize("side", ["left", "right"])
def test_imbea(graphs, side):
    from baselines import imbea

    for key, g in graphs.items():
        r = imbea.run(g, side=side)
        _check(r.count, r.fingerprint, key)


def test_parmbe(graphs):
    from baselines import parmbe

    with parmbe.ParMBEPool(2) as pool:  # one pool: each new one loads the kernels again
        for i, (key, g) in enumerate(graphs.items()):
            # split_threshold=2 splits tasks: the pieces' sums must add up too
            r = parmbe.run(g, pool=pool, split_threshold=2, side=("left", "right")[i % 2])
            _check(r.count, r.fingerprint, key)


CUMBE = (
    "import json, sys\n"
    "from mbebench.csr import from_edges\n"
    "from cumbe.engine import run\n"
    "out = []\n"
    "for nl, nr, left, right in json.loads(sys.stdin.read()):\n"
    "    r = run(from_edges(left, right, nl, nr), threads=64, k=2)\n"
    "    out.append([r.count, r.fingerprint])\n"
    "print(json.dumps(out))\n"
)


@pytest.mark.cudasim
def test_cumbe_in_the_simulator(graphs):
    gs = [graphs[k] for k in SIMULATED]
    edges = [[g.n_left, g.n_right, *(list(map(int, side)) for side in g.edges())] for g in gs]
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.run([sys.executable, "-c", CUMBE], input=json.dumps(edges), cwd=REPO,
                       env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    for key, (count, fp) in zip(SIMULATED, json.loads(p.stdout.splitlines()[-1])):
        _check(count, fp, key)
