"""cumbe.warm: the names of kernel builds, and the set the GPU oracle compiles in advance
(compiling needs a GPU: the compile itself is checked on one, benchmarks/gpu/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cumbe import warm

REPO = Path(__file__).resolve().parents[1]


def test_a_build_name_round_trips_and_a_bad_one_is_refused():
    assert warm.parse("noES-instr-compact:128") == (
        "noES", {"instr": True, "pieces": False, "compact": True, "threads": 128})
    assert warm.spec("cuMBE", 64, instr=True, pieces=True, compact=True) == \
        "cuMBE-instr-pieces-compact:64"
    # a launch bound other than the default is the third field (0: the default's name)
    assert warm.parse("cuMBE:128:8") == (
        "cuMBE", {"instr": False, "pieces": False, "compact": False, "threads": 128,
                  "blocks_per_sm": 8})
    assert warm.spec("cuMBE", 128, blocks_per_sm=8) == "cuMBE:128:8"
    assert warm.parse("cuMBE:128:0") == warm.parse("cuMBE:128")
    # the check in rounds is a flag of its own, named only when on
    assert warm.parse("cuMBE-pieces-rounds:128") == (
        "cuMBE", {"instr": False, "pieces": True, "compact": False, "threads": 128,
                  "rounds": True})
    assert warm.spec("cuMBE", 128, pieces=True, rounds=True) == "cuMBE-pieces-rounds:128"
    assert warm.every_build(["noRS"], 128, 8) == [
        "noRS:128:8", "noRS-compact:128:8", "noRS-instr:128:8", "noRS-instr-compact:128:8"]
    for bad in ("cuMBE", "cuMBE:x", "cuMBE-fast:128", "cuMBE:128:x"):
        with pytest.raises(ValueError, match="not a build"):
            warm.parse(bad)


def test_the_oracle_warms_every_build_a_check_may_launch():
    """Instrumented or not, compact or not, in pieces or not and the paper's check, the
    check in rounds or rounds with hub rows (reverse scanning only): 24 builds for each of
    cuMBE, noES and noWS, 4 for noRS, each once."""
    builds = warm.every_build(["cuMBE", "noRS", "noES", "noWS"], 128)
    assert len(builds) == len(set(builds)) == 76
    assert {warm.parse(b)[1]["pieces"] for b in builds if b.startswith("noRS")} == {False}
    assert not [b for b in builds if b.startswith("noRS") and "rounds" in b]
    assert "cuMBE-instr-pieces-compact:128" in builds and "noWS-pieces:128" in builds
    assert "cuMBE-instr-pieces-compact-rounds:128" in builds
    assert "cuMBE-instr-pieces-compact-rounds-hubs:128" in builds
    assert "noES-rounds-hubs:128" in builds
    assert not [b for b in builds if "hubs" in b and "rounds" not in b]
    for b in builds:
        variant, switches = warm.parse(b)
        assert warm.spec(variant, **switches) == b


def test_the_command_names_the_bad_build_in_one_line():
    r = subprocess.run([sys.executable, "-m", "cumbe.warm", "cuMBE:128", "cuMBE-x:128"],
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "not a build: 'cuMBE-x:128'" in r.stderr
