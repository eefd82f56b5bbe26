"""End to end: the Snakemake pipeline on the tiny graphs shipped in .test/.

Runs in a temporary copy of the workflow so the repo's own results/ are never
touched.  Counts are checked against the brute-force oracle computed here from
the shipped edge lists, not against numbers stored anywhere."""

from __future__ import annotations

import io
import json
import subprocess
import stat
import sys
import tarfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from workflow_helpers import copy_workflow, edge_text, reference, snakemake

from mbebench import atomic
from mbebench.fingerprint import to_hex

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("pipeline"))
    res = snakemake(work)
    (work / "snakemake.stderr").write_text(res.stderr)
    return work


def test_the_quick_start_ends_with_its_closing_summary(smoke_run):
    """Issue 19: no GPU, cuMBE in the simulator; every row ok, said last, exit status 0."""
    tail = (smoke_run / "snakemake.stderr").read_text().strip().splitlines()
    closing = (smoke_run / ".test/results/tables/closing.txt").read_text().splitlines()
    assert tail[-1].startswith("mbe-bench: done: ")
    assert tail[-1].endswith(" ok run(s) (exit status 0)")
    assert tail[-len(closing):] == closing
    n_rows = len(list((smoke_run / ".test/results/runs").glob("*/*.json")))
    assert tail[-1] == f"mbe-bench: done: {n_rows} ok run(s) (exit status 0)"


def test_pipeline_produces_every_table_and_plot(smoke_run):
    out = smoke_run / ".test" / "results"
    for name in ("summary.csv", "summary.md", "speedup.csv", "speedup.md", "speedup.tex",
                 "agreement.txt"):
        assert (out / "tables" / name).stat().st_size > 0, name
    for name in ("workload", "breakdown", "scaling"):
        for ext in ("png", "pdf"):
            assert (out / "plots" / f"{name}.{ext}").stat().st_size > 0
    # every output has the mode the umask gives (a group can read shared results), not 0600
    mode = 0o666 & ~atomic.current_umask()
    outputs = [p for p in out.rglob("*") if p.is_file()]
    assert len(outputs) > 20
    assert {str(p.relative_to(out)): oct(stat.S_IMODE(p.stat().st_mode)) for p in outputs
            if stat.S_IMODE(p.stat().st_mode) != mode} == {}


def test_every_engine_matches_the_oracle(smoke_run):
    test_dir = smoke_run / ".test"
    cfg = yaml.safe_load((test_dir / "config" / "config.yaml").read_text())
    gpu_datasets = cfg["engines"]["cumbe"]["datasets"]
    assert gpu_datasets  # the simulator must check something
    for name, entry in cfg["datasets"].items():
        g, (count, fp) = reference(edge_text(test_dir, name, entry))
        rows = [json.loads(p.read_text()) for p in (test_dir / "results" / "runs" / name).glob("*.json")]
        engines = {r["engine"] for r in rows}
        expected = {"imbea", "parmbe"} | ({"cumbe"} if name in gpu_datasets else set())
        assert engines == expected, name
        if name in gpu_datasets:  # (4 variants + cuMBE in rounds) x (timed, instrumented)
            assert sum(r["engine"] == "cumbe" for r in rows) == 10, name
        for row in rows:
            assert row["status"] == "ok", (name, row["run_id"], row["message"])
            assert (row["count"], row["fingerprint"]) == (count, to_hex(fp)), (name, row["run_id"])
        meta = json.loads((test_dir / "results" / "csr" / f"{name}.json").read_text())
        assert (meta["n_left"], meta["n_right"], meta["n_edges"]) == (g.n_left, g.n_right, g.n_edges)


def test_crown_graph_has_2_pow_n_minus_2_bicliques(smoke_run):
    summary = pd.read_csv(smoke_run / ".test" / "results" / "tables" / "summary.csv")
    row = summary.set_index("dataset").loc["crown-8"]
    assert int(row["count"]) == 2**8 - 2


def test_rerun_is_a_no_op(smoke_run):
    res = snakemake(smoke_run, "-n")
    assert "Nothing to be done" in res.stdout + res.stderr


def test_lint_is_clean():
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint", "--directory", ".test"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0 and "good condition" in res.stdout + res.stderr, res.stdout + res.stderr


def test_shipped_archives_match_their_generator(tmp_path):
    """The committed .test archives are exactly what .test/make_graphs.py writes."""
    sys.path.insert(0, str(REPO / ".test"))
    try:
        import make_graphs
    finally:
        sys.path.pop(0)
    for name, (member, text) in make_graphs.GRAPHS.items():
        committed = (REPO / ".test" / "konect" / f"download.tsv.{name}.tar.bz2").read_bytes()
        with tarfile.open(fileobj=io.BytesIO(committed)) as tar:
            got = tar.extractfile(f"{name}/{member}").read().decode()
        assert got == text, name
    for _name, (member, text) in make_graphs.PLAIN.items():
        assert (REPO / ".test" / "graphs" / member).read_text() == text


def test_report_builds_offline(smoke_run):
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--directory", ".test", "--report", "results/report.html"],
        cwd=smoke_run, capture_output=True, text=True, timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Missing metadata" not in res.stdout + res.stderr
    assert "Adding closing.txt" in res.stderr and "Adding agreement.txt" in res.stderr
    report = smoke_run / ".test" / "results" / "report.html"
    assert report.stat().st_size > 100_000  # tables and plots are embedded
