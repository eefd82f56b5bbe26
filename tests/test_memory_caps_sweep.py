"""benchmarks/memory-caps/sweep.py's host side: cap parsing and the summary's verdicts."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "memory-caps" / "sweep.py"
_spec = importlib.util.spec_from_file_location("memory_caps_sweep", _PATH)
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)


@pytest.mark.parametrize("cap, want", [("none", None), ("smallest", 0.079), ("0.25", 0.25),
                                       ("smallest*2", 0.158), ("smallest*1.5", 0.119)])
def test_caps_are_numbers_or_multiples_of_the_smallest(cap, want):
    assert sweep.cap_gib(cap, 0.079) == want


def _run(cap, s, count=7, status="ok"):
    return dict(name="g", cap=cap, status=status, count=count, fingerprint=1, kernel_s=s,
                n_edges=10, smallest_gib=0.079, block_tasks=0)


def test_summary_flags_missed_bars_and_different_counts():
    text = sweep.summarise([_run("none", 1.0), _run("smallest", 3.5), _run("smallest*2", 1.2),
                            _run("1", 1.4), _run("8", 1.0, count=8)])
    assert "g at smallest: 3.50x (bar 3.0x)" in text
    assert "smallest*2" in text and "1.20x" in text
    assert "g at 1:" not in text  # 1.4x is within the 1 GiB bar
    assert "**DIFFERENT**" in text
    assert "identical to uncapped 3" in text


def test_the_smallest_cap_is_the_same_with_a_reused_preparation():
    """The sweep asks for a graph's smallest cap with the preparation it reuses."""
    import numpy as np

    from cumbe import engine as cumbe_engine
    from mbebench import csr

    rng = np.random.default_rng(3)
    left, right = rng.integers(0, 60, 900), rng.integers(0, 40, 900)
    g = csr.from_edges(left, right, 60, 40)
    prep = cumbe_engine.prepare_for(g)
    smallest = cumbe_engine.smallest_memory_gib
    assert smallest(g, threads=128, prepared=prep) == smallest(g)
