"""The last lines and the exit status of real pipeline runs (issue 19, items 2 and 3): a
command-line engine printing `count: lots` fails the run and is named last; a command naming
a missing program stops the run before any job; runs skipped for want of a CUDA device end
with exit status 0 and say so; the summary is also results/tables/closing.txt."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import copy_workflow, fake_engine_env

from mbebench import plan

pytestmark = pytest.mark.slow

LOTS = ["{python}", "-c", "print('count: lots'); print('time_s: 1')", "{graph}"]


def _snakemake(work: Path, overlay: dict, *args: str, env=None) -> subprocess.CompletedProcess:
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", ".test", *args,
         "--configfile", str(work / "overlay.yaml")],
        cwd=work, capture_output=True, text=True, timeout=900, env=env)


def _overlay(**engines) -> dict:
    return {"only": ["crown-8"],
            "engines": {"repeats": 1, "parmbe": {"enabled": False}, **engines}}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("closing"))


def test_runs_skipped_for_want_of_a_gpu_end_0_and_say_why(work):
    """No CUDA device here, and no simulator asked for: cuMBE's runs are skipped."""
    cumbe = {"variant": ["cuMBE", "noWS"], "instrument": False, "rounds": False,
             "simulate": False, "datasets": ["crown-8"]}
    res = _snakemake(work, _overlay(cumbe=cumbe))
    assert res.returncode == 0, res.stderr[-3000:]
    tail = res.stderr.strip().splitlines()
    assert tail[-1] == "mbe-bench: done: 1 ok, 2 skipped run(s) (exit status 0)", tail[-8:]
    assert tail[-2].startswith("skipped: 2 cumbe run(s): no CUDA device (set "
                               "engines.cumbe.simulate: true"), tail[-8:]
    closing = (work / ".test/results/tables/closing.txt").read_text().splitlines()
    assert closing[-1] == tail[-1] and closing[-2] == tail[-2]
    # a run with nothing left to do ends with the summary too (Snakemake calls no handler)
    again = _snakemake(work, _overlay(cumbe=cumbe))
    assert again.returncode == 0
    out = again.stderr.strip().splitlines()
    assert "Nothing to be done (all requested files are present and up to date)." in out
    assert out[-len(closing):] == closing, again.stderr[-2000:]
    dry = _snakemake(work, _overlay(cumbe=cumbe), "-n")  # a dry run does not
    assert not any(ln.startswith("mbe-bench: ") for ln in (dry.stdout + dry.stderr).splitlines())


def test_an_engine_printing_count_lots_fails_the_run_and_is_named_last(work):
    res = _snakemake(work, _overlay(cumbe={"enabled": False},
                                    lots={"command": LOTS, "title": "Lots"}))
    assert res.returncode == 1, res.stderr[-3000:]
    tail = res.stderr.strip().splitlines()
    assert tail[-1].startswith("mbe-bench: FAILED: 1 error run(s) (exit status 1"), tail[-8:]
    assert ("ERROR crown-8 Lots: CommandError: unreadable output line 'count: lots': invalid "
            "literal for int() with base 10: 'lots'") in tail[-4:]
    row = json.loads((work / ".test/results/runs/crown-8/lots.json").read_text())
    assert row["status"] == "error"
    assert not (work / ".test/results/tables/agreement.txt").exists()
    # the next run, with nothing else to do, fails again: the check is redone
    again = _snakemake(work, _overlay(cumbe={"enabled": False},
                                      lots={"command": LOTS, "title": "Lots"}))
    assert again.returncode == 1 and again.stderr.strip().splitlines()[-1] == tail[-1]
    # fail_on relaxes it
    relaxed = {**_overlay(cumbe={"enabled": False}, lots={"command": LOTS, "title": "Lots"}),
               "fail_on": ["timeout", "mismatch", "unavailable"]}
    res = _snakemake(work, relaxed)
    assert res.returncode == 0, res.stderr[-3000:]
    last = res.stderr.strip().splitlines()[-1]
    assert last == "mbe-bench: done: 1 ok, 1 error run(s) (exit status 0)"


def test_a_missing_program_stops_the_run_before_any_job(work):
    res = _snakemake(work, _overlay(cumbe={"enabled": False},
                                    gone={"command": "no-such-mbe-program {graph}"}))
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1] == (
        "config error: engines.gone.command: program 'no-such-mbe-program' not found on PATH")
    assert not (work / ".test/results/runs/crown-8/gone.json").exists()


def test_the_report_of_a_run_with_overrides_needs_no_overrides(work):
    """Issue 19, item 8: `snakemake --report` without repeating the run's --configfile
    printed a 'Missing metadata' warning per planned file the run never made; the report
    holds the closing summary and the agreement check."""
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--directory", ".test", "--report",
         "results/report.html"], cwd=work, capture_output=True, text=True, timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "Missing metadata" not in out, out[-3000:]
    for name in ("closing.txt", "agreement.txt", "summary.csv"):
        assert f"Adding {name}" in out, name
    assert (work / ".test/results/report.html").stat().st_size > 100_000


def test_a_results_folder_it_cannot_write_is_one_line_naming_the_path(tmp_path):
    """Issue 33, item 7: a read-only results/ gave a traceback from write_plan and no line
    saying what was wrong (a folder where the plan file goes fails the same way as root)."""
    work = copy_workflow(tmp_path)
    (work / ".test/results/plan.json").mkdir(parents=True)
    res = _snakemake(work, _overlay(cumbe={"enabled": False}))
    assert res.returncode == 1
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("error: cannot write results/plan.json (Is a directory: "), last
    assert "Traceback" not in res.stderr and "IsADirectoryError" not in res.stderr


def test_the_plan_does_not_depend_on_cores_and_names_what_it_dropped(tmp_path):
    """Issue 33, item 2: after a full run, `--cores 1` rebuilt the tables without ParMBE's
    p=2 column and said `done: 2 ok` (3 before), and a plain `snakemake -n` planned jobs.
    The plan is the machine's; a p=N above its cores is dropped and the summary says so."""
    cores = plan.machine_cores()
    if cores < 2:
        pytest.skip("needs a machine with 2 cores")
    (tmp_path / "w").mkdir()
    work = copy_workflow(tmp_path / "w")
    # the engines' work is not the point: the oracle stands in for them (no JIT compiling)
    env = fake_engine_env(tmp_path, {"imbea": "fake_engines:oracle",
                                     "parmbe": "fake_engines:oracle"})
    big = 4096  # above any machine's cores here
    overlay = _overlay(cumbe={"enabled": False}, parmbe={"processes": [1, 2, big]})
    first = _snakemake(work, overlay, env=env)
    assert first.returncode == 0, first.stderr[-3000:]
    dropped = (f"dropped: ParMBE p={big} (engines.parmbe.processes above this machine's "
               f"{cores} cores; docs/plan.md)")
    tail = first.stderr.strip().splitlines()
    assert tail[-1] == "mbe-bench: done: 3 ok run(s) (exit status 0)" and dropped in tail
    tables = work / ".test/results/tables"
    before = {p.name: p.read_bytes() for p in tables.iterdir()}
    assert "ParMBE p=2" in before["speedup.md"].decode()

    again = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--directory", ".test",
         "--configfile", str(work / "overlay.yaml")],
        cwd=work, capture_output=True, text=True, timeout=900, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stderr, again.stderr[-3000:]
    assert again.stderr.strip().splitlines()[-len(tail):][-2:] == tail[-2:]
    assert {p.name: p.read_bytes() for p in tables.iterdir()} == before
    dry = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--directory", ".test",
         "--configfile", str(work / "overlay.yaml")],
        cwd=work, capture_output=True, text=True, timeout=900, env=env)
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr, \
        (dry.stdout + dry.stderr)[-3000:]
