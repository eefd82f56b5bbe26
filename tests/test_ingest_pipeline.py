"""The ingest rules hand the config's dataset entries and download/konect settings
to the download and convert steps: a path's sha256, allow_non_bipartite, the member
size limit and the deadline; a failed check is recorded as the dataset being
unavailable (the step succeeds, the other datasets go on) and leaves no file but its status."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml
from workflow_helpers import copy_workflow
from workflow_helpers import snakemake

pytestmark = pytest.mark.slow

EDGES = b"% bip unweighted\n1 1\n1 2\n2 2\n"


def _archive(path: Path, data: bytes) -> None:
    with tarfile.open(path, "w:bz2") as tf:
        ti = tarfile.TarInfo("big/out.big")
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))


def _log(test_dir: Path, step: str, dataset: str) -> str:
    lines = (test_dir / "logs" / step / f"{dataset}.log").read_text().strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_ingest_rules_pass_checksums_limits_and_format_flags(tmp_path):
    work = copy_workflow(tmp_path)
    test_dir = work / ".test"
    (test_dir / "graphs" / "out.good").write_bytes(EDGES)
    (test_dir / "graphs" / "out.sym").write_bytes(b"% sym unweighted\n1 2\n2 3\n")
    (test_dir / "portal.tar.bz2").write_text("<html><body>Sign in first</body></html>\n")
    _archive(test_dir / "big.tar.bz2", b"1 1\n" * 2000)  # an 8000-byte member
    names = ["crown-8", "goodsum", "badsum", "sym", "symok", "portal", "big"]
    overlay = {
        "only": names,
        "konect": {"max_member_gib": 4000 / 2**30},
        "download": {"deadline_s": 600},
        "datasets": {
            "goodsum": {"path": "graphs/out.good", "sha256": hashlib.sha256(EDGES).hexdigest()},
            "badsum": {"path": "graphs/out.good", "sha256": "0" * 64},
            "sym": {"path": "graphs/out.sym"},
            "symok": {"path": "graphs/out.sym", "allow_non_bipartite": True},
            "portal": {"url": "portal.tar.bz2"},
            "big": {"url": "big.tar.bz2"},
        },
    }
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    targets = [f"results/csr/{n}.json" for n in names]
    # no --keep-going needed: a failure about a dataset is recorded, not a failed job
    res = snakemake(work, *targets, "--configfile", str(work / "overlay.yaml"))
    assert "Error in rule" not in res.stdout + res.stderr
    csr = test_dir / "results" / "csr"
    good = ("crown-8", "goodsum", "symok")
    assert sorted(p.name for p in csr.iterdir()) == sorted(
        [f"{n}.csr" for n in good] + [f"{n}.json" for n in names])
    status = {n: json.loads((csr / f"{n}.json").read_text()) for n in names}
    for n in names:
        want = "ok" if n in good else "unavailable"
        assert status[n]["status"] == want, (n, status[n])
    for n, step in (("badsum", "convert"), ("sym", "convert"), ("portal", "download"),
                    ("big", "download")):
        # the step's one-line error is both its log and the recorded reason
        assert status[n]["step"] == step
        assert f"error: {status[n]['reason']}" == _log(test_dir, step, n)
    assert "sha256 mismatch" in _log(test_dir, "convert", "badsum")
    assert "not bipartite" in _log(test_dir, "convert", "sym")
    line = _log(test_dir, "download", "portal")
    assert "'portal'" in line and "portal.tar.bz2" in line and "no usable tar.bz2" in line
    assert "over the limit of 4000" in _log(test_dir, "download", "big")
    # no archive is kept for a failed download, only its receipt saying why
    assert sorted(p.name for p in (test_dir / "resources" / "downloads").iterdir()) == [
        "big.json", "crown-8.json", "crown-8.tar.bz2", "crown-8.tar.bz2.sha256", "portal.json"]
    # The deadline reaches the command line (a real trickle is in test_download.py).
    dry = snakemake(work, "-n", "-p", "-f", "resources/downloads/crown-8.json",
                    "--configfile", str(work / "overlay.yaml"))
    assert "--deadline 600 " in dry.stdout + dry.stderr


SCHEMA = str(Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml")


def test_schema_defaults_for_ingest():
    from snakemake.utils import validate

    cfg = {"datasets": {"g": {"konect": "g"}}}
    validate(cfg, SCHEMA)
    assert cfg["download"]["deadline_s"] == 7200
    assert cfg["konect"]["max_member_gib"] == 16
    # allow_non_bipartite is off unless given (the schema fills in only the shard defaults)
    assert cfg["datasets"]["g"] == {"konect": "g", "shards": 1, "shards_per_job": 1}


@pytest.mark.parametrize("bad", [
    {"download": {"deadline_s": 0}},
    {"konect": {"max_member_gib": -1}},
    {"datasets": {"g": {"path": "x", "allow_non_bipartite": "yes"}}},
    {"datasets": {"g": {"path": "x", "sha256": "abc"}}},
])
def test_schema_rejects_bad_ingest_settings(bad):
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    with pytest.raises(WorkflowError):
        validate({"datasets": {"g": {"konect": "g"}}, **bad}, SCHEMA)
