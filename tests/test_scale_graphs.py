"""benchmarks/scale/scale.py's planted grades: the heavier-hub grades really get their hubs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "scale" / "scale.py"
_spec = importlib.util.spec_from_file_location("scale_graphs", _PATH)
scale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scale)


def test_the_hub_grades_exceed_the_small_grades_caps():
    small = scale.planted("l")
    hubs = scale.planted("xl")
    assert small.n_edges == hubs.n_edges == 2_000_000
    # l keeps degrees within its caps (2,000 left, 4,000 right); xl lifts them (20,000 / 40,000)
    assert np.diff(small.left_offsets).max() <= 2000
    assert np.diff(small.right_offsets).max() <= 4000
    assert np.diff(hubs.right_offsets).max() > 4000


def test_every_grade_is_described():
    for grade, spec in scale.PLANTED.items():
        edges, blocks, _ls, _rs, _p, _pools, exponent, (cap_l, cap_r) = spec
        assert edges > 0 and blocks > 0 and exponent > 1 and cap_l > 0 and cap_r > 0, grade
    assert {"planted-xl", "planted-xxl"} <= set(scale.DEFAULT_GRAPHS)
