"""The work-analysis builds of the engines' kernels (``baselines._imbea_kernel.build``,
``baselines._parmbe_kernel.build`` with work counters, driven by
benchmarks/cpu/work_analysis.py): every switch setting must find exactly the
maximal bicliques, on random graphs and graphs with hubs and twins.  The per-task runs of
benchmarks/cpu/task_work.py are tested here too: one file, so one test process compiles
these builds (two compiling them into numba's cache at once broke an entry,
docs/reliability.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "cpu"))

import task_work  # noqa: E402
import work_analysis  # noqa: E402

from mbebench.csr import from_edges, write_csr  # noqa: E402
from mbebench.fingerprint_sum import from_hex, sum_hex  # noqa: E402
from mbebench.oracle import count_and_fingerprint  # noqa: E402

pytestmark = pytest.mark.slow  # each variant compiles a kernel build of its own


def _graphs():
    rng = np.random.default_rng(11)
    out = []
    for i in range(40):
        nl, nr = int(rng.integers(1, 14)), int(rng.integers(1, 16))
        m = rng.random((nl, nr)) < rng.choice([0.15, 0.3, 0.5, 0.8])
        if i % 3 == 0:  # hubs and duplicated rows/columns (twins)
            m[0, :] = True
            m[:, 0] = True
            if nl > 2:
                m[nl - 1] = m[1]
            if nr > 3:
                m[:, 2] = m[:, 3]
        out.append(from_edges(*np.nonzero(m), nl, nr))
    return out


GRAPHS = _graphs()
# Every switch value of each family once, in as few builds as cover them (a build compiles
# for ~10 s): the orders and sides reuse the engine's build.
VARIANTS = [
    "I", "I-side", "I-desc", "I-random", "I-twin0", "I-closure", "I-all-twin0",
    "imbea:order=random,twin=2,wmode=1",
    "P", "P-side", "P-desc", "P-random",
    "parmbe:side=other,order=random,skip=0,wcache=1,wstatic=4",
    "parmbe:order=desc,vmajor=1,wstatic=16",
    # bit words: every task (at most 15 vertices a list here), and subtrees below the root
    "parmbe:dense=64",
    "parmbe:side=other,order=random,skip=0,dense=3",
    # other first-level orders; the degree floor's model
    "parmbe:order=wedge,degcut=1",
    "parmbe:side=other,order=peel",
    # a memo of the tested Γ's: every one, and a table of 8 slots
    "parmbe:memo=1",
    "parmbe:side=other,order=random,memo=3",
]


def _switch_values(variants):
    """(family, switch, value) of every setting the variants make, defaults included."""
    out = set()
    for v in variants:
        fam, spec = work_analysis.parse_variant(v)
        out |= {(fam, k, val) for k, val in spec.items()}
    return out


def test_the_degree_floor_leaves_vertices_out_and_never_adds_lookups():
    cut = 0
    for g in GRAPHS:
        base = work_analysis.run_variant(g, "P")["counters"]
        c = work_analysis.run_variant(g, "parmbe:degcut=1")["counters"]
        assert c["closure_tried"] <= base["closure_tried"], g
        assert c["closure_chunks"] <= base["closure_chunks"], g
        assert base["closure_degcut"] == 0
        cut += c["closure_degcut"]
    assert cut > 0


def test_the_memo_settles_only_branches_the_test_rejects():
    """memo=K: a branch the memo settles (a witness ranked below the root, checked) is one
    the test rejects, every rejected branch is settled or missed, and a bounded table
    settles no more than the whole memo."""
    hits = {1: 0, 3: 0}
    for g in GRAPHS:
        for k in hits:
            c = work_analysis.run_variant(g, f"parmbe:memo={k}")["counters"]
            assert c["memo_bad"] == 0, (k, g)
            assert c["memo_hits"] + c["memo_missed"] == c["nonmax"], (k, g)
            assert c["memo_closure"] <= c["closure"] and c["memo_expand"] <= c["expand"]
            assert c["memo_verify"] >= c["memo_hits"]
            hits[k] += c["memo_hits"]
        assert work_analysis.run_variant(g, "P")["counters"]["memo_keys"] == 0
    assert 0 < hits[3] <= hits[1]


def test_a_shuffled_task_order_changes_only_what_the_memo_finds():
    """--shuffle-tasks: the same search in another order of the tasks (every counter but
    the memo's), and the memo still settles only rejected branches."""
    for g in GRAPHS[:12]:
        a = work_analysis.run_variant(g, "parmbe:memo=1")
        b = work_analysis.run_variant(g, "parmbe:memo=1", shuffle=5)
        assert (a["count"], a["fingerprint"]) == (b["count"], b["fingerprint"])
        ca, cb = a["counters"], b["counters"]
        assert {k: v for k, v in ca.items() if not k.startswith("memo")} == \
            {k: v for k, v in cb.items() if not k.startswith("memo")}
        assert cb["memo_bad"] == 0 and cb["memo_hits"] + cb["memo_missed"] == cb["nonmax"]
        assert b["shuffle_tasks"] == 5
    # iMBEA's tasks keep their rank order, and its row says so
    assert work_analysis.run_variant(GRAPHS[0], "I", shuffle=5)["shuffle_tasks"] is None


def test_variants_cover_every_switch_value():
    missing = _switch_values(work_analysis.PRESETS) - _switch_values(VARIANTS)
    assert not missing, f"preset switch values that no tested variant runs: {sorted(missing)}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_matches_oracle(variant):
    for g in GRAPHS:
        r = work_analysis.run_variant(g, variant)
        want = count_and_fingerprint(g)
        assert (r["count"], int(r["fingerprint"], 16)) == want, (variant, g)
        c = r["counters"]
        assert c["bicliques"] == r["count"]
        assert c["nonmax"] <= c["nodes"]
        if r["family"] == "parmbe":  # one closure test a node (or a cached witness); long ones
            assert c["closure_tests"] + c["witness_hits"] + c["dense_tests"] == c["nodes"]
            assert c["dense_chunks"] <= c["dense_words"] and c["dense_roots"] <= c["nodes"] + 1
            assert c["witness_hits"] <= c["nonmax"]
            assert c["closure_long"] <= c["closure_tests"]
            # tests settled by the shortest list, by one more list, by two; the rest read 3+
            at = [c[f"closure_at{i}"] for i in range(3)]
            assert sum(at) <= c["closure_tests"]
            assert c["closure_tried_r"] <= c["closure_tried"]
            if not work_analysis.parse_variant(variant)[1]["vmajor"]:
                rest = c["closure_tests"] - sum(at)
                assert c["closure_lists"] >= at[1] + 2 * at[2] + 3 * rest
                # a list is read only while the intersection holds more than R'
                assert c["closure_tried"] > c["closure_tried_r"] or c["closure_lists"] == 0
                # a round of the 32-lane model reads one list or more
                assert 0 < c["closure_rounds32"] <= c["closure_lists"] or c["closure_lists"] == 0
                # more lists a round at every size of the intersection: never more rounds
                assert (c["closure_rounds32"] <= c["rounds_gpu"] <= c["closure_lists"]
                        and c["rounds_wide"] <= c["rounds_mid"] <= c["rounds_gpu"])
                assert c["rounds_wide"] > 0 or c["closure_lists"] == 0
                # the scan for the shortest list reads every list's length (one at least),
                # the scan that stops early no more
                assert c["closure_tests"] <= c["closure_scan_stop"] <= c["closure_scan"]
                # the test that knows P (witnesses only): the same verdict at every node,
                # never more lists nor lookups (its intersection is the witnesses of today's)
                assert c["pw_disagree"] == 0
                if not work_analysis.parse_variant(variant)[1]["degcut"]:  # (the floor: fewer)
                    assert c["pw_lists"] <= c["closure_lists"]
                    assert c["pw_tried"] <= c["closure_tried"]
                assert c["pw_expand_rejected"] <= c["expand"]


@pytest.mark.parametrize("variant", [v for v in VARIANTS if "dense" in v])
def test_bit_words_take_the_branch_tests_they_model(variant):
    """dense=T: the subtrees of a Γ of at most T vertices test on words, the rest by lists;
    T = 64 takes every task of these graphs whole (at most 15 vertices a list), T = 3 both
    kinds."""
    tot = {"closure_tests": 0, "dense_tests": 0, "dense_roots": 0, "dense_words": 0}
    for g in GRAPHS:
        c = work_analysis.run_variant(g, variant)["counters"]
        for k in tot:
            tot[k] += c[k]
    t = work_analysis.parse_variant(variant)[1]["dense"]
    assert tot["dense_tests"] > 0 and tot["dense_roots"] > 0 and tot["dense_words"] > 0
    assert (tot["closure_tests"] == 0) == (t == 64)


@pytest.mark.parametrize("variant", ["I", "P"])
def test_samples_of_the_tasks_add_up_to_the_whole(variant):
    """--every K: the K samples (tasks j, j + K, ...) hold every maximal biclique once."""
    for g in GRAPHS[:12]:
        want = count_and_fingerprint(g)
        for k in (1, 2, 3):
            parts = [work_analysis.run_variant(g, variant, k, j) for j in range(k)]
            fp = from_hex(sum_hex(r["fingerprint"] for r in parts))
            assert (sum(r["count"] for r in parts), fp) == want, (variant, k, g)


def test_cli_samples_cover_the_graph(tmp_path):
    """work_analysis.py --every K --first J: the K runs add up to the whole graph's count and
    fingerprint (the check of a graph too large for one run); --first must be below K."""
    g = GRAPHS[22]  # 138 maximal bicliques, 78 and 60 in the two halves
    write_csr(g, tmp_path / "g.csr")
    for j in (0, 1):
        assert work_analysis.main([str(tmp_path / "g.csr"), "--variants", "P-dense", "--every",
                                   "2", "--first", str(j), "--json",
                                   str(tmp_path / "rows.jsonl")]) == 0  # fmt: skip
    rows = [json.loads(line)["rows"][0] for line in (tmp_path / "rows.jsonl").open()]
    assert [r["first"] for r in rows] == [0, 1]
    fp = from_hex(sum_hex(r["fingerprint"] for r in rows))
    assert (sum(r["count"] for r in rows), fp) == count_and_fingerprint(g)
    with pytest.raises(SystemExit):
        work_analysis.main([str(tmp_path / "g.csr"), "--every", "2", "--first", "2"])


def test_parse_rejects_unsupported_combinations():
    with pytest.raises(ValueError):
        work_analysis.parse_variant("imbea:check=1,twin=1")
    with pytest.raises(ValueError):
        work_analysis.parse_variant("imbea:buildq=0")
    with pytest.raises(ValueError):
        work_analysis.parse_variant("parmbe:twin=1")
    for bad in ("parmbe:dense=65", "parmbe:dense=8,wcache=1", "parmbe:memo=1,degcut=1"):
        with pytest.raises(ValueError):
            work_analysis.parse_variant(bad)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_task_work_tasks_add_up_to_the_whole_search(seed):
    """task_work.py: the tasks run one at a time add up to the whole search (its bicliques,
    the oracle's count; its work, the whole run's counters)."""
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


def test_task_work_shares_rank_by_work_and_by_estimate():
    work = np.array([50, 30, 10, 5, 5] + [0] * 995)
    est = np.arange(1000, 0, -1, dtype=float)  # the estimate ranks task 0 first, then 1, ...
    est[0], est[4] = est[4], est[0]  # ... but puts task 4 (work 5) in task 0's place
    s = task_work.shares(work, est)
    assert s["top 0.001"] == {"tasks": 1, "work_share": 0.5, "estimate_top_share": 0.05}
    assert s["top 0.01"]["work_share"] == 1.0
    assert s["top 0.01"]["estimate_top_share"] == 1.0
