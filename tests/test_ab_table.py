"""benchmarks/gpu/ab.py's table: each build's time over the first build's, and agreement
judged on the builds that finished (a timeout is not a disagreement)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu" / "ab.py"


def _ab():
    spec = importlib.util.spec_from_file_location("ab_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(graph, build, s, count=7, fp="0x1"):
    if s is None:
        return {"graph": graph, "build": build, "kernel_s": None, "count": None,
                "fingerprint": None}
    return {"graph": graph, "build": build, "kernel_s": s, "count": count, "fingerprint": fp}


def test_every_build_over_the_first_and_agreement_of_the_finished():
    rows = [_row("a", "head", 2.0, 1234), _row("a", "x", 1.0, 1234), _row("a", "y", 3.0, 1234),
            _row("b", "head", 4.0), _row("b", "x", None), _row("b", "y", 2.0),
            _row("c", "head", 1.0, 5), _row("c", "x", 1.0, 6), _row("c", "y", 1.0, 5),
            _row("d", "head", None), _row("d", "x", None), _row("d", "y", None)]
    lines = _ab().table(rows, ["head", "x", "y"])
    assert lines[0] == "| graph | bicliques | head s | x s | y s | x / head | y / head | agree |"
    assert lines[1].count("|") == lines[0].count("|")
    body = {ln.split(" | ")[0][2:]: ln for ln in lines[2:]}
    assert body["a"] == "| a | 1,234 | 2 | 1 | 3 | 0.500 | 1.500 | yes |"
    assert body["b"] == "| b | 7 | 4 | - | 2 | - | 0.500 | yes (1 not finished) |"
    assert body["c"].endswith("| NO |") and "| c | - |" in body["c"]
    assert body["d"] == "| d | - | - | - | - | - | - | - |"
