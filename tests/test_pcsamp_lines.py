"""tools/pcsamp_lines.py: Nsight Compute's source page summed by line, function and caller."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "pcsamp_lines.py"
spec = importlib.util.spec_from_file_location("pcsamp_lines", TOOL)
pcsamp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pcsamp)

MAX = "def check():\n    one()\n\n\ndef one():\n    x = 1\n    return x\n"
ARENA = "def ld():\n    return 0\n"


def _page(tmp_path: Path) -> Path:
    """A source page of two files (the format `ncu --page source --csv --print-source
    cuda,sass` writes): a helper's instructions lie between its callers' by address."""
    root = tmp_path / "src" / "cumbe" / "kernel"
    root.mkdir(parents=True)
    (root / "maximality.py").write_text(MAX)
    (root / "arena.py").write_text(ARENA)
    k = str(root)
    head = '"Line No","Source","Address","Source","stall","stall_ni","smsp__pcsamp_sample_count"'
    rows = [f'"File Path","{k}/arena.py"', '"Function Name","kernel"', head,
            '"2","return 0","-","-","9","9","9"',
            '"","","0x20","      LDG R1, [R2]","7","7","7"',
            '"","","...","...","-","-","-"',
            '"","","0x50","      LDG R3, [R4]","2","2","2"',
            f'"File Path","{k}/maximality.py"', '"Function Name","kernel"', head,
            '"2","one()","-","-","1","1","1"',
            '"","","0x10","      MOV R1, R2","1","1","1"',
            '"6","x = 1","-","-","20","20","20"',
            '"","","0x40","      IADD R1, R1, 1","20","20","20"',
            # the page lists some of a helper's instructions under its call's line as well
            '"","","0x50","      LDG R3, [R4]","2","2","2"']
    page = tmp_path / "lines.csv"
    page.write_text("\n".join(rows) + "\n")
    return page


def test_samples_count_to_lines_functions_and_the_caller_of_a_helper(tmp_path):
    out = pcsamp.summary(str(_page(tmp_path)), root=tmp_path / "src")
    assert out.startswith("30 samples")  # 0x50, listed twice, counts once
    assert " 73.3 %  maximality.py:one" in out and " 30.0 %  arena.py:ld" in out
    assert "  3.3 %  maximality.py:check" in out
    assert " 73.3 %  maximality.py:6  x = 1" in out
    # 0x20 follows check's 0x10 by address; 0x50 is listed with one's line 6
    assert " 23.3 %  arena.py after maximality.py:2 (maximality.py:check)" in out
    assert "  6.7 %  arena.py with maximality.py:6 (maximality.py:one)" in out


def test_a_context_takes_what_was_inlined_after_it(tmp_path):
    out = pcsamp.summary(str(_page(tmp_path)), root=tmp_path / "src", context=("check",))
    head = "by context (--context; each instruction once):\n"
    ctx = out.split(head)[1].split("\n\n")[0].splitlines()
    # check's own instruction, the helper after it, one's line inlined after it, and the
    # helper after that: all of it check's
    assert ctx == ["100.0 %  maximality.py:check"]


def test_a_file_that_is_not_a_source_page_is_a_one_line_error(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text('"Line No","Source"\n"x","y","z","w"\n')
    with pytest.raises(SystemExit, match="not a source page"):
        pcsamp.main([str(bad)])
