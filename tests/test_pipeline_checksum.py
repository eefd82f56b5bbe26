"""A changed ``sha256:`` of a finished dataset downloads it again (issue 33, break 1): the
checksum is a recorded rule param (what is fetched), unlike where from (dataset_status.Untracked).
Only the download step of one dataset runs, so the test takes seconds."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import copy_workflow

pytestmark = pytest.mark.slow

RECEIPT = "resources/downloads/crown-8.json"


def _download(work: Path, sha256: str, *args: str) -> str:
    overlay = {"only": ["crown-8"], "datasets": {"crown-8": {"konect": "crown-8",
                                                              "sha256": sha256}}}
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", RECEIPT, "--cores", "1", "--directory", ".test",
         *args, "--configfile", str(work / "overlay.yaml")],
        cwd=work, capture_output=True, text=True, timeout=300)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    return out


def test_a_changed_checksum_downloads_the_dataset_again(tmp_path):
    work = copy_workflow(tmp_path)
    archive = work / ".test/konect/download.tsv.crown-8.tar.bz2"
    right = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert "rule download:" in _download(work, right)
    assert json.loads((work / ".test" / RECEIPT).read_text())["status"] == "ok"
    assert "rule download:" not in _download(work, right, "-n")  # done: nothing to redo
    # another pinned checksum: the archive is fetched (and checked) again
    assert "rule download:" in _download(work, "0" * 64, "-n")
