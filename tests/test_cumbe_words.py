"""Bit words below a small L (:mod:`cumbe.kernel.words`, the rounds build's check there)
against the oracle, in numba's CUDA simulator (one block of two warps, a child process as in
test_cumbe_rounds.py): roots at the first level of a task (L of at most 64) and, with the
test bound ``MBEBENCH_TEST_WORDS_MAX`` = 3, roots deeper down under nodes checked on lists;
roots whose words do not fit the least slice (lists of about 266 on the L side: they stay
on the lists); stolen nodes (a thief builds its own words); both sides.  The simulator's tally
(``words.SIM_STATS``) says what ran: a run where no root was built, or none failed to fit,
would not check its path."""

from __future__ import annotations

import json

import pytest
from simulated import run_simulated

CHILD = r"""
import json
import os
import numpy as np
from cumbe import engine
from cumbe.kernel import words
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

graphs = {}
for seed in range(4):
    rng = np.random.default_rng(40 + seed)
    a, b = int(rng.integers(5, 9)), int(rng.integers(8, 20))
    m = rng.random((a, b)) < rng.uniform(0.45, 0.8)
    graphs[f"r{seed}"] = from_edges(*np.nonzero(m), n_left=a, n_right=b)
# 6 x 280, four rows at density 0.95: a root holding three of their lists (about 266 each)
# needs a hash of 2,048 slots, more than the least slice (16 KiB) holds
m = np.random.default_rng(5).random((6, 280)) < np.array([0.95] * 4 + [0.1] * 2)[:, None]
graphs["deep"] = from_edges(*np.nonzero(m), n_left=6, n_right=280)
# the same at 6 x 200: roots fit, and about 190 vertices lie in two of their lists or more, so
# a check reads its words in several chunks of 32, heaviest first, down to the lightest it needs
m = np.random.default_rng(5).random((6, 200)) < np.array([0.95] * 4 + [0.1] * 2)[:, None]
graphs["mid"] = from_edges(*np.nonzero(m), n_left=6, n_right=200)
# 45 x 8 at density 0.93, the 8 side's candidates: roots of 33-45 vertices (bits past a
# word's low half), each list at most 8 long
m = np.random.default_rng(6).random((45, 8)) < 0.93
graphs["wide"] = from_edges(*np.nonzero(m), n_left=45, n_right=8)
if words.WORDS_MAX == 64:
    runs = [("r0", "left", {}), ("r1", "right", {"eager_steal": 1}),
            ("deep", "right", {"word_kib": 16, "eager_steal": 1}), ("wide", "right", {}),
            ("mid", "right", {"eager_steal": 1})]
else:  # roots under nodes checked on lists
    runs = [("r0", "left", {}), ("r1", "right", {"eager_steal": 1}),
            ("r2", "left", {"eager_steal": 1}), ("r3", "right", {})]
# the gate: no level has this many candidates, so no root is built (the lists check all)
runs.append(("r0", "left", {"gate": 10**9}))
out = []
for name, side, extra in runs:
    g = graphs[name]
    extra = dict(extra)
    os.environ["MBEBENCH_WORDS_MIN_CANDIDATES"] = str(extra.pop("gate", 1))
    for k in words.SIM_STATS:
        words.SIM_STATS[k] = 0
    res = engine.run(g, threads=64, k=3, side=side, rounds=True, **{"word_kib": 256, **extra})
    want = count_and_fingerprint(g)
    out.append(dict(graph=name, side=side, extra=sorted(extra), want=[want[0], want[1]],
                    gate=int(os.environ["MBEBENCH_WORDS_MIN_CANDIDATES"]),
                    got=[res.count, res.fingerprint], tasks_run=res.stats["tasks_run"],
                    n_tasks=res.stats["n_tasks"], words=dict(words.SIM_STATS),
                    slice=res.stats["word_area_per_warp"]))
print(json.dumps(out))
"""


def _runs(bound: str):
    p = run_simulated(CHILD, 1200, MBEBENCH_TEST_WORDS_MAX=bound)
    assert p.returncode == 0, p.stderr[-3000:]
    return bound, json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs64():
    """Roots at the GPU's bound: the first L of at most 64 vertices."""
    return _runs("64")


@pytest.fixture(scope="module")
def runs3():
    """Roots at L of at most 3 vertices: deeper, under nodes checked on the lists."""
    return _runs("3")


@pytest.fixture(params=["runs64", "runs3"])
def runs(request):
    return request.getfixturevalue(request.param)


@pytest.mark.cudasim
def test_the_check_on_words_matches_the_oracle(runs):
    bound, rows = runs
    assert len(rows) == (6 if bound == "64" else 5)
    for r in rows:
        assert r["got"] == r["want"], r


@pytest.mark.cudasim
def test_no_root_below_the_candidates_gate(runs):
    """A level with fewer candidates than MBEBENCH_WORDS_MIN_CANDIDATES builds no words
    (the same graph at the gate of 1 does)."""
    bound, rows = runs
    gated = [r for r in rows if r["gate"] > 1]
    assert len(gated) == 1 and gated[0]["words"]["roots"] == 0, gated
    assert gated[0]["words"]["checks"] == 0 and gated[0]["got"] == gated[0]["want"]
    if bound == "64":  # (at the bound of 3 this graph may have no root at all)
        assert any(r["graph"] == gated[0]["graph"] and r["gate"] == 1
                   and r["words"]["roots"] > 0 for r in rows)


@pytest.mark.cudasim
def test_roots_were_built_and_checked_on_words(runs):
    bound, rows = runs
    for r in rows:
        assert r["slice"] > 0, r
    rows = [r for r in rows if r["gate"] == 1]
    small = [r for r in rows if r["graph"].startswith("r")]
    built = [r["words"]["roots"] > 0 and r["words"]["checks"] > 0 for r in small]
    # (every small graph has an L of at most 64 below its first level; of at most 3, some)
    assert all(built) if bound == "64" else sum(built) >= 2, small
    assert any(r["tasks_run"] > r["n_tasks"] and r["words"]["roots"] > 0 for r in small)
    # every node below a level whose L was small enough was checked on words (a root is the
    # first such level, however large the levels above it were), save below roots that did
    # not fit
    for r in rows:
        if r["words"]["unfit"] == 0:
            assert r["words"]["missed"] == 0, r
    assert any(r["words"]["unfit"] == 0 for r in rows)


@pytest.mark.cudasim
def test_wide_roots_long_checks_and_roots_that_do_not_fit_ran(runs64):
    """Roots of more than 32 vertices, checks reading several chunks of words, and roots left
    on the lists (their counts are checked above)."""
    _, rows = runs64
    by = {r["graph"]: r["words"] for r in rows}
    assert by["wide"]["wide"] > 0, by
    assert by["mid"]["long"] > 0 and by["mid"]["unfit"] == 0, by
    assert by["deep"]["unfit"] > 0, by


OR = r"""
import numpy as np
from numba import cuda
from cumbe.kernel.sync import warp_or

@cuda.jit
def k(bits, out):
    t = cuda.threadIdx.x
    out[t] = warp_or(np.int64(1) << bits[t])

bits = np.random.default_rng(4).integers(0, 64, 64).astype(np.int64)
bits[31] = 63
out = np.zeros(64, np.int64)
k[1, 64](bits, out)
want = []
for w in range(2):
    m = 0
    for b in bits[w * 32:(w + 1) * 32]:
        m |= 1 << int(b)
    want.append(int(np.array([m], np.uint64).view(np.int64)[0]))
print([sorted(set(out[w * 32:(w + 1) * 32].tolist())) == [want[w]] for w in range(2)])
"""


@pytest.mark.cudasim
def test_the_simulators_warp_or_is_each_warps_own_with_bit_63():
    """Every lane gets its warp's OR of 64-bit masks, bit 63 (the sign) included."""
    p = run_simulated(OR, 300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.strip().splitlines()[-1].lower()) == [True, True]



STEPS = r"""
import json
import numpy as np
from numba import cuda
from cumbe.consts import Build, Group, NS, S_NONMAX, WARP
from cumbe.kernel import words
from cumbe.kernel.arena import base_at
from cumbe.kernel.sync import wsync

dev = cuda.jit(device=True)
cfg = Build(True, True, True, False, 32, dev, False, False, True, False, True)
w = words.make_words(cfg, Group(WARP, wsync))
build_root, check_words = w.build_root, w.check_words

@cuda.jit
def steps(A, k, d, nv, offV, adjV, WD, qo, qk, qt, out):
    gl = cuda.threadIdx.x
    sh = cuda.shared.array((1, NS), np.int32)
    NV = base_at(nv, 0)
    n2, H = build_root(A, 0, k, d, NV, offV, adjV, WD, 0, WD.shape[0], gl)
    if gl == 0:
        out[0] = n2
    for q in range(qo.shape[0]):
        if gl == 0:
            sh[0, S_NONMAX] = 0
        wsync()
        check_words(A, qo[q], qk[q], qt[q], NV, offV, WD, 0, d, n2, H, sh, 0, gl)
        wsync()
        if gl == 0:
            out[1 + q] = sh[0, S_NONMAX]

rng = np.random.default_rng(11)
res = []
for case in range(8):
    n_v = int(rng.integers(40, 260))
    k = 10 if case == 7 else 64 if case in (0, 6) else int(rng.integers(1, 65))
    d = k + int(rng.integers(0, 20))  # N(v): local ids 0..d-1, the root holds k of them
    local = rng.permutation(d)[:k].astype(np.int32)
    nv = rng.permutation(n_v)[:d].astype(np.int32)  # local id -> vertex of the other side
    # lists of the root's vertices (ids of the candidates' side): dense ones for many heavy
    # words, sparse ones for words of two bits (the lightest a check of two vertices reads)
    dens = np.where(rng.random(n_v) < 0.5, rng.uniform(0.2, 0.95, n_v),
                    rng.uniform(0.003, 0.03, n_v))
    offV = [0]
    adjV = []
    sets = {}
    for y in range(n_v):
        if case == 6:  # words of more than 32 bits (vertices 0..149) and of fewer
            s = np.flatnonzero(rng.random(300) < np.where(np.arange(300) < 150, 0.97, 0.05))
        elif case == 7:  # 120 words of exactly {u_0, u_1}, after chunks of heavier words
            if y in (nv[local[0]], nv[local[1]]):
                s = np.arange(120)
            else:
                s = 150 + np.flatnonzero(rng.random(150) < 0.9)
        else:
            s = np.flatnonzero(rng.random(300) < dens[y])
        sets[y] = set(s.tolist())
        adjV += s.tolist()
        offV.append(len(adjV))
    A = [*local]
    qo, qk, qt, want = [], [], [], []
    for q in range(40):
        kl = int(rng.integers(1, k + 1)) if q % 4 else int(rng.integers(1, min(k, 3) + 1))
        sub = rng.choice(local, kl, replace=False)
        if q % 4 == 1 and k >= 2:  # two vertices of sparse lists: their words of two bits
            sparse = [j for j in local if dens[int(nv[j])] < 0.05]
            if len(sparse) >= 2:
                kl = 2
                sub = rng.choice(sparse, 2, replace=False)
        forced = case == 7 and q % 4 == 1  # more than |R'| of them: all four chunks are read
        if forced:
            kl = 2
            sub = local[:2]
        closure = set.intersection(*(sets[int(nv[j])] for j in sub))
        target = len(closure) - int(rng.integers(0, 2))
        if forced:
            target = len(closure) - 1
        qo.append(len(A)); qk.append(kl); qt.append(target); want.append(int(len(closure) > target))
        A += sub.tolist()
    # (what a slice held before: the build must not count on zeros)
    WD = rng.integers(-2**31, 2**31, 1 << 18).astype(np.int32)
    out = np.zeros(41, np.int64)
    steps[1, 32](np.array(A, np.int32), k, d, nv, np.array(offV, np.int64),
                 np.array(adjV, np.int32), WD, np.array(qo, np.int32), np.array(qk, np.int32),
                 np.array(qt, np.int32), out)
    weights = [sum(x in sets[int(nv[j])] for j in local) for x in range(300)]
    heavy = sum(1 for c in weights if c >= 2)
    over32 = sum(1 for c in weights if c > 32)
    two = sum(1 for q in range(40) if qk[q] == 2 and want[q] == 0 and qt[q] > 0)
    res.append(dict(k=k, n2=int(out[0]), heavy=heavy, over32=over32, two=two,
                    got=out[1:].tolist(), want=want))
print(json.dumps(res))
"""


@pytest.mark.cudasim
def test_the_build_and_the_check_against_brute_force_closures():
    """build_root and check_words alone, one warp, on roots of 1-64 vertices (two of all 64,
    one with words on both sides of 32 bits; one whose check of two vertices reads 120 words
    of exactly two bits past chunks of heavier ones) with lists dense enough for hundreds of
    words of two bits or more (checks that read several chunks, heaviest first), each against
    40 subsets whose closure is counted by hand, at |R'| = the closure (maximal) and one less
    (not)."""
    p = run_simulated(STEPS, 600)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = json.loads(p.stdout.strip().splitlines()[-1])
    assert any(r["k"] == 64 for r in rows) and any(r["heavy"] > 96 for r in rows)
    assert rows[6]["over32"] > 32 and rows[6]["heavy"] - rows[6]["over32"] > 32, rows[6]
    assert rows[7]["heavy"] > 200 and rows[7]["want"][1] == 1, rows[7]
    assert sum(r["two"] for r in rows) >= 8
    for r in rows:
        assert r["n2"] == r["heavy"], r
        assert r["got"] == r["want"], r


def test_the_gate_reads_its_variable(monkeypatch):
    """The fewest candidates of a root: the module's default, the environment's value (at
    least 1), a one-line error naming the variable for a value that is no integer."""
    from cumbe import words_area

    monkeypatch.delenv(words_area.MIN_CANDIDATES_ENV, raising=False)
    assert words_area.min_candidates() == words_area.MIN_CANDIDATES
    monkeypatch.setenv(words_area.MIN_CANDIDATES_ENV, "48")
    assert words_area.min_candidates() == 48
    monkeypatch.setenv(words_area.MIN_CANDIDATES_ENV, "0")
    assert words_area.min_candidates() == 1
    monkeypatch.setenv(words_area.MIN_CANDIDATES_ENV, "many")
    with pytest.raises(ValueError, match=words_area.MIN_CANDIDATES_ENV):
        words_area.min_candidates()
