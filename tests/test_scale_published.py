"""benchmarks/scale/scale.py runs GMBE and the original cuMBE as the pipeline writes their
inputs, and reads their own counts and times (stand-in programs, no GPU)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mbebench.csr import from_edges

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "scale" / "scale.py"
_spec = importlib.util.spec_from_file_location("scale_benchmark", _PATH)
scale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scale)


def _program(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_published_codes_run_on_their_inputs_and_report_their_own_numbers(tmp_path,
                                                                         monkeypatch):
    g = from_edges([0, 0, 1], [0, 1, 1], 2, 2)
    # GMBE: -i FILE -s 2 -f, an adjacency file; the original cuMBE: FILE cuMBE, a .bi file
    # and a result/ folder in its run folder
    gmbe = _program(tmp_path / "gmbe",
                    'test "$1 $3 $4 $5" = "-i -s 2 -f" && test -s "$2" || exit 3\n'
                    'echo "maximal nodes: 3"; echo "Total processing time: 0.25 seconds"\n')
    orig = _program(tmp_path / "orig", 'test -d result && test -s "$1" && test "$2" = cuMBE '
                    '|| exit 4\necho "maximal bicliques: 3"; echo "runtime (s): 0.5"\n')
    assert scale.run_published("gmbe", gmbe, g, 30) == {"status": "ok", "seconds": 0.25,
                                                         "count": 3}
    assert scale.run_published("cumbe_orig", orig, g, 30) == {"status": "ok", "seconds": 0.5,
                                                              "count": 3}
    bad = _program(tmp_path / "bad", "echo nothing; exit 1\n")
    assert scale.run_published("gmbe", bad, g, 30)["status"] == "error"
    slow = _program(tmp_path / "slow", "sleep 5\n")
    assert scale.run_published("cumbe_orig", slow, g, 0.5)["status"] == "timeout"
    # a binary named relative to the caller's folder (as the README's command does) runs
    # from the code's own run folder all the same
    monkeypatch.chdir(tmp_path)
    assert scale.run_published("gmbe", "./gmbe", g, 30)["status"] == "ok"
