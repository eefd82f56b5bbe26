"""Through the real Snakemake pipeline on the tiny .test graphs: a command-line
engine that gets a count wrong.

Counts are checked against the brute-force oracle of the shipped edge lists."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from workflow_helpers import copy_workflow, edge_text, reference, snakemake

from mbebench.fingerprint import to_hex

pytestmark = pytest.mark.slow


def _env(work: Path) -> dict[str, str]:
    path = os.pathsep.join([str(work / "tests" / "plugins"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _oracle(work: Path) -> dict[str, tuple[int, str]]:
    cfg = yaml.safe_load((work / ".test/config/config.yaml").read_text())
    out = {}
    for name, entry in cfg["datasets"].items():
        _, (count, fp) = reference(edge_text(work / ".test", name, entry))
        out[name] = (count, to_hex(fp))
    return out


LIAR = {
    "only": ["crown-8", "hubs"],
    "engines": {
        "repeats": 1,
        "parmbe": {"enabled": False},
        "cumbe": {"enabled": False},
        "liar": {"command": "{python} -m mbe_toy_cli --format konect --wrong {graph}",
                 "input": "konect", "datasets": ["hubs"]},
    },
}


def test_a_count_mismatch_fails_the_pipeline_and_the_tables_stay(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "liar.yaml").write_text(yaml.safe_dump(LIAR))
    res = snakemake(work, "--configfile", str(work / "liar.yaml"), check=False, env=_env(work))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "Error in rule check_counts" in out
    assert "count/fingerprint mismatch in 1 dataset(s): hubs" in out
    results = work / ".test" / "results"
    # the evidence the message points to is on disk
    md = (results / "tables" / "summary.md").read_text()
    assert re.search(r"\| \*\*hubs\*\* \|.*\*\*MISMATCH\*\*", md)
    assert "crown-8 |" in md
    for name in ("summary.csv", "speedup.csv", "speedup.md", "speedup.tex"):
        assert (results / "tables" / name).stat().st_size > 0
    assert (results / "plots" / "scaling.png").is_file()
    assert not (results / "tables" / "agreement.txt").exists()
    count = _oracle(work)["hubs"][0]
    log = (work / ".test" / "logs" / "check_counts.log").read_text()
    assert f"hubs: MISMATCH: iMBEA -> {count} (" in log
    assert f"liar -> {count + 1} (no fingerprint)" in log
    assert "crown-8: 1 ok runs agree" in log
    # a rerun redoes the check only: rows and tables are done
    dry = snakemake(work, "-n", "--configfile", str(work / "liar.yaml"), env=_env(work))
    jobs = re.findall(r"^rule (\w+):", dry.stdout + dry.stderr, flags=re.M)
    jobs += re.findall(r"^localrule (\w+):", dry.stdout + dry.stderr, flags=re.M)
    assert sorted(set(jobs)) == ["all", "check_counts"], dry.stdout[-3000:]
