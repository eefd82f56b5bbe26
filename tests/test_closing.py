"""The closing summary and the exit status (issue 19, items 2 and 3): rows per engine by
status, each failure named with its reason, why runs were skipped, which planned runs left no
row (failed) or never started (interrupted first), and the config's fail_on."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from rowfactory import make_row, write_rows

from mbebench import cli, closing


def _meta(tmp: Path, ds: str, reason: str | None = None) -> str:
    p = tmp / "results" / "csr" / f"{ds}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    st = {"status": "unavailable", "reason": reason} if reason else {"status": "ok"}
    p.write_text(json.dumps({"dataset": ds, **st}))
    return str(p)


ROWS = [
    make_row("a", "imbea", label="iMBEA", count=5),
    make_row("a", "toy-cli", "error", label="toy-cli",
             message="unreadable output line 'count: lots': invalid literal for int()"),
    make_row("b", "imbea", label="iMBEA", count=7),
    make_row("b", "liar", label="liar", count=8, fingerprint=None),
    make_row("a", "cumbe", "skipped", label="cuMBE", message="no CUDA device"),
    make_row("b", "cumbe", "skipped", label="cuMBE", message="no CUDA device"),
    make_row("c", "imbea", "timeout", label="iMBEA", message="timed out after 15 s"),
    make_row("d", "imbea", "unavailable", label="iMBEA", message="dataset 'd': gone"),
]


def test_every_outcome_is_counted_per_engine_and_named_with_its_reason(tmp_path):
    paths = write_rows(tmp_path, ROWS)
    metas = [_meta(tmp_path, "a"), _meta(tmp_path, "d", "dataset 'd': download failed")]
    s = closing.summarize(paths, metas)
    text = s.text
    table = {ln.split()[0]: ln.split()[1:] for ln in s.lines[2:6]}
    # ok, mismatch, error, timeout, skipped, unavailable
    assert table["imbea"] == ["1", "1", "0", "1", "0", "1"], text
    assert table["toy-cli"] == ["0", "0", "1", "0", "0", "0"], text
    assert table["liar"] == ["0", "1", "0", "0", "0", "0"], text
    assert table["cumbe"] == ["0", "0", "0", "0", "2", "0"], text
    assert "ERROR a toy-cli: unreadable output line 'count: lots'" in text
    assert "TIMEOUT c iMBEA: timed out after 15 s" in text
    assert "MISMATCH b: iMBEA -> 7 (0x00000000000000ff); liar -> 8 (no fingerprint)" in text
    assert "skipped: 2 cumbe run(s): no CUDA device (set engines.cumbe.simulate" in text
    assert "  d: dataset 'd': download failed" in text
    assert s.exit_code == 1
    assert s.lines[-1].startswith("mbe-bench: FAILED: 1 error, 1 timeout run(s); 1 mismatch "
                                  "dataset(s); 1 unavailable dataset(s) (1 runs) (exit status 1")


def test_skipped_for_want_of_a_gpu_exits_0_and_fail_on_relaxes(tmp_path):
    skipped = [r for r in ROWS if r["status"] in ("skipped",)] + [ROWS[0]]
    s = closing.summarize(write_rows(tmp_path, skipped))
    assert s.exit_code == 0 and "skipped: 2 cumbe run(s): no CUDA device" in s.text
    assert s.lines[-1] == "mbe-bench: done: 1 ok, 2 skipped run(s) (exit status 0)"
    assert closing.summarize(write_rows(tmp_path, skipped), fail_on=["skipped"]).exit_code == 1
    relaxed = closing.summarize(write_rows(tmp_path, ROWS), fail_on=[])
    assert relaxed.exit_code == 0 and "ERROR a toy-cli" in relaxed.text


def test_the_check_fails_on_exactly_the_fail_on_outcomes(tmp_path):
    paths = write_rows(tmp_path, ROWS[:2])  # an error row, nothing else wrong
    out = tmp_path / "agreement.txt"
    args = ["check", "--rows", *paths, "--out", str(out)]
    assert cli.main(args) == 1 and not out.exists()
    assert cli.main([*args, "--fail-on", "timeout", "mismatch", "unavailable"]) == 0
    assert out.read_text().startswith("a: 1 ok runs agree: 5")


def test_missing_rows_that_never_started_are_not_called_failed(tmp_path):
    paths = write_rows(tmp_path, ROWS[:1])
    failed = tmp_path / "results/runs/a/parmbe-p1.json"
    never = tmp_path / "results/runs/b/parmbe-p1.json"
    old = tmp_path / "results/runs/c/parmbe-p1.json"
    for p in (failed, old):
        log = closing.run_log(p)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("error: killed\n")
    started = time.time()
    os.utime(closing.run_log(old), (started - 60, started - 60))  # a log of an earlier run
    os.utime(closing.run_log(failed), (started + 1, started + 1))
    s = closing.summarize([*paths, str(failed), str(never), str(old)], started_at=started,
                          stopped=True)
    assert (f"mbe-bench: 1 engine run(s) left no row (their jobs failed or were interrupted; "
            f"see the errors above and their logs), e.g. {failed}") in s.text
    assert f"mbe-bench: 2 engine run(s) did not start (the run stopped first; the next run " \
           f"does them), e.g. {never}" in s.text
    # the rows there are fine, but the run stopped: it failed, and says so last
    assert s.exit_code == 1 and s.lines[-1] == (
        "mbe-bench: FAILED: a job failed or the run was interrupted (exit status 1; see the "
        "errors above)")


@pytest.mark.parametrize("failed", [False, True])
def test_the_handler_prints_the_summary_last_and_sets_the_exit_status(tmp_path, capsys, failed):
    paths = write_rows(tmp_path, ROWS[:1])
    with pytest.raises(SystemExit) as e:
        closing.handler(paths, [], {}, started_at=time.time(), failed=failed, log="x.log")
    assert e.value.code == (1 if failed else 0)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "Complete log: x.log"
    last = "mbe-bench: FAILED: a job failed" if failed else "mbe-bench: done: 1 ok"
    assert err[-1].startswith(last)


def test_a_successful_run_that_left_planned_rows_undone_says_so(tmp_path):
    paths = write_rows(tmp_path, ROWS[:1])
    later = str(tmp_path / "results/runs/b/imbea.json")
    s = closing.summarize([*paths, later])
    assert s.exit_code == 0
    assert s.lines[-2] == ("mbe-bench: 1 planned engine run(s) have no row yet (not needed for "
                           "this run's targets, or left for the next run: run the same command "
                           f"again), e.g. {later}")


def test_the_failed_line_counts_unavailable_datasets_as_the_line_above_does(tmp_path):
    """Issue 33, item 7: "FAILED: 88 unavailable" counted runs below a line counting 8
    datasets.  Both count datasets now, and the runs are named as runs."""
    rows = [make_row(ds, run, "unavailable", label=run, message=f"dataset {ds!r}: gone")
            for ds in ("d", "e") for run in ("imbea", "parmbe-p1", "parmbe-p2")]
    s = closing.summarize(write_rows(tmp_path, rows + ROWS[:2]))
    assert "mbe-bench: FAILED: 1 error run(s); 2 unavailable dataset(s) (6 runs) (exit" in s.text
    assert "2 dataset(s) unavailable, left out of the tables" in s.text
    relaxed = closing.summarize(write_rows(tmp_path, rows + ROWS[:1]), fail_on=["error"])
    assert relaxed.lines[-1] == ("mbe-bench: done: 1 ok run(s); 2 unavailable dataset(s) "
                                 "(6 runs) (exit status 0)")
    with pytest.raises(closing.RunsFailed) as e:
        closing.verdict(rows + ROWS[:2], {})
    assert str(e.value).splitlines()[0].startswith("1 error run(s); 2 unavailable dataset(s) (")


def test_a_failed_job_s_own_reason_is_in_the_summary(tmp_path):
    """Issue 33, item 7: a failing job's one-line reason was only in its log; the console
    showed Snakemake's CalledProcessError and "FAILED: a job failed"."""
    paths = write_rows(tmp_path, ROWS[:1])
    failed = tmp_path / "results/runs/a/parmbe-p1.json"
    log = closing.run_log(failed)
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.time() - 5
    log.write_text("a progress line\nTraceback (most recent call last):\n  File x\n"
                   "error: dataset 'a': results/csr/a.csr: CSR checksum mismatch\nlater noise\n")
    tables = tmp_path / "logs/tables.log"
    tables.write_text("error: results/runs/a/imbea.json: unreadable result row\n")
    plots = tmp_path / "logs/plots.log"
    plots.write_text("error: an old failure\n")
    os.utime(plots, (started - 60, started - 60))  # a log of an earlier run
    s = closing.summarize([*paths, str(failed)], started_at=started, stopped=True)
    assert (f"  {failed}: error: dataset 'a': results/csr/a.csr: CSR checksum mismatch "
            f"({log})") in s.lines
    assert (f"FAILED tables: error: results/runs/a/imbea.json: unreadable result row "
            f"({tables})") in s.lines
    assert not any("old failure" in ln for ln in s.lines)
    assert s.lines[-1].startswith("mbe-bench: FAILED: a job failed")


def test_runs_the_plan_dropped_are_listed_with_their_reason(tmp_path):
    """Issue 33, item 2: the closing summary shows the runs the plan left out."""
    line = "dropped: ParMBE p=4 (engines.parmbe.processes above this machine's 2 cores; x)"
    paths = write_rows(tmp_path, ROWS[:1])
    s = closing.summarize(paths, dropped=[line])
    assert line in s.lines and s.exit_code == 0
    out = tmp_path / "closing.txt"
    assert cli.main(["closing", "--rows", *paths, "--out", str(out), "--dropped", line]) == 0
    assert line in out.read_text().splitlines()
