"""One environment-variable prefix (mbebench.envvars): the new name first, the old still read."""

from __future__ import annotations

import re
import subprocess

from workflow_helpers import REPO

from mbebench import envvars


def test_the_new_name_wins_and_the_old_one_is_read_with_one_note(monkeypatch, capsys):
    monkeypatch.setattr(envvars, "_warned", set())
    for name in ("MBEBENCH_SIM_DEVICES", "CUMBE_SIM_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    assert envvars.get("MBEBENCH_SIM_DEVICES", "1") == "1"
    monkeypatch.setenv("CUMBE_SIM_DEVICES", "3")
    assert envvars.get("MBEBENCH_SIM_DEVICES") == "3"
    assert envvars.get("MBEBENCH_SIM_DEVICES") == "3"
    assert capsys.readouterr().err.count("CUMBE_SIM_DEVICES is read for now") == 1
    monkeypatch.setenv("MBEBENCH_SIM_DEVICES", "2")
    assert envvars.get("MBEBENCH_SIM_DEVICES") == "2"


def test_the_simulator_takes_its_device_count_under_the_old_name_too(monkeypatch):
    from cumbe import devices

    monkeypatch.delenv("MBEBENCH_SIM_DEVICES", raising=False)
    monkeypatch.setenv("CUMBE_SIM_DEVICES", "4")
    assert devices.available(sim=True) == 4


def test_no_code_reads_an_old_name_itself():
    """Old names live in envvars.OLD_NAMES only (the kernel's build switches excepted)."""
    old = "|".join(map(re.escape, envvars.OLD_NAMES.values()))
    files = subprocess.run(["git", "ls-files", "*.py", "*.smk"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    found = [f for f in files if f != "mbebench/envvars.py"
             and f != "tests/test_envvars.py"
             and re.search(rf"\b({old})\b", (REPO / f).read_text())]
    assert found == []


def test_every_old_name_is_a_variable_name_of_the_old_prefixes():
    """OLD_NAMES maps a new name to the name earlier versions read, never to prose."""
    for new, old in envvars.OLD_NAMES.items():
        assert new.startswith("MBEBENCH_") and new.removeprefix("MBEBENCH_")
        assert re.fullmatch(r"(CUMBE|MBE)_[A-Z0-9_]+", old), (new, old)


def test_a_switch_is_on_when_set_to_anything_but_empty_or_zero(monkeypatch):
    monkeypatch.delenv("CUMBE_WRAPAROUND", raising=False)
    assert not envvars.flag("CUMBE_WRAPAROUND")
    for value, on in (("", False), ("0", False), ("1", True), ("yes", True)):
        monkeypatch.setenv("CUMBE_WRAPAROUND", value)
        assert envvars.flag("CUMBE_WRAPAROUND") is on, value
    # a switch is read under its old name too, as get() reads it
    monkeypatch.delenv("MBEBENCH_PREP_CACHE", raising=False)
    monkeypatch.setenv("CUMBE_PREP_CACHE", "1")
    assert envvars.flag("MBEBENCH_PREP_CACHE")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "0")
    assert not envvars.simulating()
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert envvars.simulating()
