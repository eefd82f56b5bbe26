"""Through the real Snakemake pipeline on the tiny .test graphs: docs/engines.md's
"Bring your own engine" example (a cuMBE k sweep, a Python engine and a
command-line engine), and a command-line engine that gets a count wrong.

Counts are checked against the brute-force oracle of the shipped edge lists."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml
from mdtable import row as md_row
from workflow_helpers import REPO, copy_workflow, edge_text, reference, snakemake

from mbebench.fingerprint import to_hex

pytestmark = pytest.mark.slow
BYO = REPO / "tests" / "plugins" / "byo.yaml"
README_COMMAND = ("PYTHONPATH=$PWD/tests/plugins snakemake --cores all --directory .test "
                  "--configfile tests/plugins/byo.yaml")


def _env(work: Path) -> dict[str, str]:
    path = os.pathsep.join([str(work / "tests" / "plugins"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def _rows(work: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in (work / ".test/results/runs").glob("*/*.json")]


def _oracle(work: Path) -> dict[str, tuple[int, str]]:
    cfg = yaml.safe_load((work / ".test/config/config.yaml").read_text())
    out = {}
    for name, entry in cfg["datasets"].items():
        _, (count, fp) = reference(edge_text(work / ".test", name, entry))
        out[name] = (count, to_hex(fp))
    return out


def _readme_section() -> str:
    text = (REPO / "docs" / "engines.md").read_text()
    return text.split("## Bring your own engine", 1)[1].split("\n## ", 1)[0]


def test_readme_example_is_the_tested_one():
    section = _readme_section()
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, flags=re.S)
    configs = [yaml.safe_load(b) for lang, b in blocks if lang == "yaml"]
    assert yaml.safe_load(BYO.read_text()) in configs
    assert any(README_COMMAND in b for lang, b in blocks if lang == "bash")
    toy = (REPO / "tests" / "plugins" / "mbe_toy.py").read_text()
    (code,) = [b for lang, b in blocks if lang == "python"]
    assert code.strip() in toy


@pytest.fixture(scope="module")
def byo_run(tmp_path_factory):
    work = copy_workflow(tmp_path_factory.mktemp("byo"))
    # the README's command, relative paths and all (--cores 2 for CI)
    snakemake(work, "--configfile", "tests/plugins/byo.yaml", env=_env(work))
    return work


def test_every_run_of_the_example_matches_the_oracle(byo_run):
    oracle = _oracle(byo_run)
    rows = _rows(byo_run)
    engines = {(r["dataset"], r["engine"]) for r in rows}
    assert engines == {("paper-fig1", e) for e in ("imbea", "cumbe", "toy-py", "toy-cli")} | {
        ("hubs", e) for e in ("imbea", "toy-py", "toy-cli")}
    for r in rows:
        assert r["status"] == "ok", (r["dataset"], r["label"], r["message"])
        count, fp = oracle[r["dataset"]]
        assert r["count"] == count, (r["dataset"], r["label"])
        # the command-line engine gives its count only; the others their fingerprint too
        assert r["fingerprint"] == (None if r["engine"] == "toy-cli" else fp)
    # each k with the paper's check and ours (the quick start's rounds: [false, true])
    sweep = sorted((r["params"]["k"], r["params"]["rounds"]) for r in rows
                   if r["engine"] == "cumbe")
    assert sweep == [(k, rounds) for k in (1, 2, 24) for rounds in (False, True)]
    assert (byo_run / ".test/results/graphs/hubs.adj").is_file()  # the export rule ran
    assert (byo_run / ".test/results/tables/agreement.txt").is_file()  # the check passed


def test_the_sweep_and_both_plugins_are_columns_of_the_tables(byo_run):
    summary = pd.read_csv(byo_run / ".test/results/tables/summary.csv").set_index("dataset")
    for col in ("iMBEA", "cuMBE k=1", "cuMBE k=2", "cuMBE k=24", "toy-py side=left",
                "toy-py side=right", "toy-cli"):
        assert col in summary.columns, col
    seconds, note = summary.loc["paper-fig1", "cuMBE k=2"].split(" ", 1)
    assert float(seconds) > 0 and note == "(simulator)"  # CUDA simulator seconds say so
    assert summary.loc["hubs", "cuMBE k=2"] == "not run"
    assert float(summary.loc["hubs", "toy-cli"]) >= 0
    assert summary["agree"].all()
    speedup = pd.read_csv(byo_run / ".test/results/tables/speedup.csv")
    assert "toy-cli [s]" in speedup.columns and "cuMBE k=1 vs toy-cli" in speedup.columns


LIAR = {
    "only": ["crown-8", "hubs"],
    "engines": {
        "repeats": 1,
        "parmbe": {"enabled": False},
        "cumbe": {"enabled": False},
        "liar": {"command": "{python} -m mbe_toy_cli --format konect --wrong {graph}",
                 "input": "konect", "datasets": ["hubs"]},
        # the right count, other bicliques: caught by the fingerprint alone
        "fp-liar": {"module": "mbe_fp_liar:run", "datasets": ["crown-8"]},
    },
}


def test_a_count_or_fingerprint_mismatch_fails_the_pipeline_and_the_tables_stay(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "liar.yaml").write_text(yaml.safe_dump(LIAR))
    res = snakemake(work, "--configfile", str(work / "liar.yaml"), check=False, env=_env(work))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "Error in rule check_counts" in out
    assert "count/fingerprint mismatch in 2 dataset(s): crown-8, hubs" in out
    # the closing summary comes after Snakemake's echo of the failed job, and ends the run
    tail = res.stderr.strip().splitlines()
    assert tail[-1].startswith("mbe-bench: FAILED: 2 mismatch dataset(s) (exit status 1"), tail
    assert any(ln.startswith("MISMATCH hubs: iMBEA -> ") for ln in tail[-8:]), tail[-12:]
    assert any(ln.startswith("MISMATCH crown-8: ") for ln in tail[-8:]), tail[-12:]
    results = work / ".test" / "results"
    # the evidence the message points to is on disk
    md = (results / "tables" / "summary.md").read_text()
    assert "**MISMATCH**" in md_row(md, "**hubs**")
    assert "**MISMATCH**" in md_row(md, "**crown-8**")
    for name in ("summary.csv", "speedup.csv", "speedup.md", "speedup.tex"):
        assert (results / "tables" / name).stat().st_size > 0
    assert (results / "plots" / "scaling.png").is_file()
    assert not (results / "tables" / "agreement.txt").exists()
    oracle = _oracle(work)
    count = oracle["hubs"][0]
    log = (work / ".test" / "logs" / "check_counts.log").read_text()
    assert f"hubs: MISMATCH: iMBEA -> {count} (" in log
    assert f"liar -> {count + 1} (no fingerprint)" in log
    count, fp = oracle["crown-8"]
    wrong = to_hex(int(fp, 16) ^ 1)
    assert f"crown-8: MISMATCH: iMBEA -> {count} ({fp}); fp-liar -> {count} ({wrong})" in log
    # a rerun redoes the check only: rows and tables are done
    dry = snakemake(work, "-n", "--configfile", str(work / "liar.yaml"), env=_env(work))
    jobs = re.findall(r"^rule (\w+):", dry.stdout + dry.stderr, flags=re.M)
    jobs += re.findall(r"^localrule (\w+):", dry.stdout + dry.stderr, flags=re.M)
    assert sorted(set(jobs)) == ["all", "check_counts"], dry.stdout[-3000:]
