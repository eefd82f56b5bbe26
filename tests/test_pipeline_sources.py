"""Finished results are never undone by a different source (issue 19, item 1).

The same archive, wherever it comes from, is up to date: switching a mirror between its
``file://`` URL and its plain path, or forgetting the mirror (the default server is down),
plans no download, conversion or engine run.  A download that does re-run (forced, or a
retry) and fails keeps the checksummed archive on disk, and with it the CSR and the rows."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import copy_workflow

pytestmark = pytest.mark.slow

ONLY = ["crown-8", "paper-fig1"]
ENGINES = {"repeats": 1, "parmbe": {"enabled": False}, "cumbe": {"enabled": False}}
# nothing listens on port 9 of this machine: a server that is down, at once
DOWN = "http://127.0.0.1:9/files/"


def _work(tmp: Path) -> Path:
    (tmp / "w").mkdir()
    return copy_workflow(tmp / "w")


def _snakemake(work: Path, base_url: str, *args: str, **extra) -> subprocess.CompletedProcess:
    # one --configfile: a second one would replace it
    overlay = {"only": ONLY, "konect": {"base_url": base_url},
               "download": {"retries": 1, "connect_timeout_s": 2}, "engines": ENGINES, **extra}
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", ".test", *args,
         "--configfile", str(work / "overlay.yaml")],
        cwd=work, capture_output=True, text=True, timeout=600)


def _planned(res: subprocess.CompletedProcess) -> set[str]:
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    return {rule for rule in ("download", "convert", "run_engine", "tables", "check_counts")
            if f"rule {rule}:" in out or f"checkpoint {rule}:" in out}


def _state(test_dir: Path) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns)
            for sub in ("results/runs", "results/csr", "resources/downloads")
            for p in (test_dir / sub).rglob("*") if p.is_file()}


def test_another_address_of_the_same_archives_undoes_nothing(tmp_path):
    work = _work(tmp_path)
    test_dir = work / ".test"
    mirror = tmp_path / "konect-mirror"
    shutil.copytree(test_dir / "konect", mirror)

    res = _snakemake(work, mirror.as_uri() + "/")
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    before = _state(test_dir)
    rows = [json.loads(p.read_text()) for p in (test_dir / "results/runs").rglob("*.json")]
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)

    # the README's two forms of one mirror, and no mirror at all with the server down
    assert _planned(_snakemake(work, str(mirror), "-n")) == set()
    assert _planned(_snakemake(work, str(mirror) + "/", "-n")) == set()
    assert _planned(_snakemake(work, DOWN, "-n")) == set()
    # ... and `only` the one dataset: its finished runs stay (the tables are redone)
    res = _snakemake(work, DOWN, "-n", only=["crown-8"])
    assert _planned(res) == {"tables", "check_counts"}

    # a download that re-runs anyway (here: forced) and fails keeps the verified archive,
    # its CSR and the rows, and says so in its log
    res = _snakemake(work, DOWN, "--forcerun", "download")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    for ds in ONLY:
        receipt = json.loads((test_dir / f"resources/downloads/{ds}.json").read_text())
        assert receipt["status"] == "ok" and receipt["kept"] is True, receipt
        assert "127.0.0.1:9" in receipt["note"] and "kept the archive" in receipt["note"]
        log = (test_dir / f"logs/download/{ds}.log").read_text()
        assert log.startswith("warning: dataset ") and "kept the archive" in log, log
    assert "rule run_engine:" not in out and "checkpoint convert:" not in out
    after = _state(test_dir)
    for p, (data, mtime) in before.items():
        if p.parent.name == "downloads" and p.suffix == ".json":
            continue  # the receipts were rewritten: they now say the archive was kept
        assert after[p] == (data, mtime), p
    # and nothing is left to do
    assert _planned(_snakemake(work, DOWN, "-n")) == set()

    # content decides: an archive that changed on the mirror, once downloaded again, is
    # converted and run again (on the run after the download: the one that re-downloads
    # plans before it knows the new content)
    shutil.copy(test_dir / "konect/download.tsv.complete-4x5.tar.bz2",
                mirror / "download.tsv.crown-8.tar.bz2")
    res = _snakemake(work, mirror.as_uri(), "--forcerun", "download")
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert _planned(_snakemake(work, mirror.as_uri(), "-n")) >= {"convert", "run_engine"}
    res = _snakemake(work, str(mirror))
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    row = json.loads((test_dir / "results/runs/crown-8/imbea.json").read_text())
    assert row["count"] == 1 and row["graph"]["n_edges"] == 20  # K_{4,5}: one biclique
    assert json.loads((test_dir / "results/runs/paper-fig1/imbea.json").read_text()) \
        == json.loads(before[test_dir / "results/runs/paper-fig1/imbea.json"][0])


def test_a_failed_retry_recovers_a_dataset_from_its_kept_archive(tmp_path):
    """What an older version left after a failed refresh: the archive and its sidecar are
    good, but the receipt, the meta and the rows say unavailable.  The next run, with the
    server still down, uses the archive."""
    work = _work(tmp_path)
    test_dir = work / ".test"
    res = _snakemake(work, "konect/")
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    reason = f"dataset 'crown-8': download of {DOWN}download.tsv.crown-8.tar.bz2 failed"
    for p in (test_dir / "resources/downloads/crown-8.json", test_dir / "results/csr/crown-8.json"):
        p.write_text(json.dumps({"dataset": "crown-8", "status": "unavailable",
                                 "step": "download", "reason": reason, "retry": "0"}))
    (test_dir / "results/csr/crown-8.csr").unlink()
    row = test_dir / "results/runs/crown-8/imbea.json"
    row.write_text(json.dumps({**json.loads(row.read_text()), "status": "unavailable",
                               "count": None, "fingerprint": None, "message": reason}))

    res = _snakemake(work, DOWN)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert json.loads(row.read_text())["status"] == "ok"
    assert json.loads(row.read_text())["count"] == 2**8 - 2

    # what is fetched does count: another KONECT name is downloaded, converted and run at once
    res = _snakemake(work, "konect/", datasets={"crown-8": {"konect": "complete-4x5"}})
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert json.loads(row.read_text())["count"] == 1  # K_{4,5}
