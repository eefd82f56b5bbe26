"""The stand-in generator (benchmarks/standins.py): sizes, caps, determinism,
and the CSR it writes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

import standins  # noqa: E402

from mbebench.csr import from_edges, read_csr  # noqa: E402


def _degrees(g):
    return np.diff(np.asarray(g.left_offsets)), np.diff(np.asarray(g.right_offsets))


@pytest.mark.parametrize("name", ["BookCrossing", "YouTube-blocks", "stackoverflow-cap1000"])
def test_small_standin_round_trip(tmp_path, name):
    p = standins.preset_params(name, seed=3, scale=0.02)
    path, rec = standins.write(p, tmp_path)
    g = read_csr(path)  # verifies the checksum
    assert (g.n_left, g.n_right) == (p.n_left, p.n_right)  # isolated vertices kept
    assert 0.98 * p.n_edges <= g.n_edges <= p.n_edges
    dl, dr = _degrees(g)
    assert dl.max() <= p.cap_left and dr.max() <= p.cap_right
    # sorted, duplicate-free lists: the same graph as the project's builder makes
    left, right = g.edges()
    ref = from_edges(left, right, g.n_left, g.n_right)
    for a in ("left_offsets", "left_indices", "right_offsets", "right_indices"):
        assert np.array_equal(np.asarray(getattr(g, a)), np.asarray(getattr(ref, a))), a
    side = json.loads(path.with_suffix(".json").read_text())
    r = side["realised"]
    assert side["params"]["preset"] == name and side["params"]["seed"] == 3
    assert (r["n_left"], r["n_right"], r["n_edges"]) == (g.n_left, g.n_right, g.n_edges)
    assert r["left"]["max_degree"] == dl.max()
    assert r["right"]["sum_sq_degree"] == int((dr.astype(np.int64) ** 2).sum())
    if name.endswith("-blocks"):
        assert r["blocks"]["count"] >= 1 and r["block_edges_drawn"] > 0


def test_same_seed_same_graph_other_seed_differs():
    p1 = standins.preset_params("BookCrossing-blocks", seed=5, scale=0.01)
    g1, _ = standins.generate(p1)
    g2, _ = standins.generate(p1)
    g3, _ = standins.generate(standins.preset_params("BookCrossing-blocks", seed=6, scale=0.01))
    assert np.array_equal(g1.left_indices, g2.left_indices)
    assert np.array_equal(g1.right_offsets, g2.right_offsets)
    assert not np.array_equal(g1.left_indices, g3.left_indices)


def test_expected_degrees_capped_and_summing_to_edges():
    e = standins.expected_degrees(10_000, 2.5, 50_000, 300)
    assert e.max() == pytest.approx(300)
    assert e.sum() == pytest.approx(50_000)
    assert np.all(np.diff(e) <= 1e-9)  # descending
    with pytest.raises(ValueError):
        standins.expected_degrees(10, 2.5, 1000, 50)


def test_cap_scaling_and_drop_isolated():
    nat = standins.preset_params("BookCrossing", scale=0.125)
    lin = standins.preset_params("BookCrossing", scale=0.125, cap_scaling="linear")
    none = standins.preset_params("BookCrossing", scale=0.125, cap_scaling="none")
    assert (nat.cap_left, lin.cap_left, none.cap_left) == (1000, 500, 4000)  # 0.125^(2/3) = 1/4
    g, rec = standins.generate(standins.preset_params("YouTube", scale=0.02, drop_isolated=True))
    dl, dr = _degrees(g)
    assert dl.min() > 0 and dr.min() > 0
    assert rec["realised"]["left"]["non_isolated"] == g.n_left


def test_cli_list_and_unknown_preset(capsys):
    assert standins.main(["--list", "--scale", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "DBLP-author-blocks" in out and "BookCrossing-cap7000" in out
    with pytest.raises(KeyError):
        standins.preset_params("NoSuchGraph")
