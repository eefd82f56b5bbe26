"""The report's registry (mbebench/report/registry.py) is what the rules write."""

from __future__ import annotations

import re

from workflow_helpers import REPO, copy_workflow, snakemake

from mbebench.report import registry

RULES = ("tables", "plots", "check_counts", "closing")


def _outputs(dry_run: str) -> dict[str, list[str]]:
    """rule -> its job's output files, from a dry run's job list."""
    out = {}
    for block in re.split(r"\n(?=rule \w+:)", dry_run):
        name = re.match(r"rule (\w+):", block)
        files = re.search(r"^\s+output: (.*)$", block, re.M)
        if name and files:
            out[name.group(1)] = files.group(1).split(", ")
    return out


def test_the_rules_write_what_the_registry_lists(tmp_path):
    work = copy_workflow(tmp_path)
    res = snakemake(work, "--dry-run", "--forceall", *RULES)
    outputs = _outputs(res.stdout)
    for rule in RULES:
        assert outputs[rule] == registry.rule_files(rule), rule
    assert sorted(f for rule in RULES for f in outputs[rule]) == sorted(
        f for o in registry.OUTPUTS for f in o.files())


def test_every_shown_output_has_its_caption_and_no_rule_spells_a_path():
    for o in registry.OUTPUTS:
        assert o.shown in o.formats and (REPO / "workflow/report" / o.caption).is_file(), o
    for smk in (REPO / "workflow/rules").glob("*.smk"):
        assert not re.search(r"results/(tables|plots)\b", smk.read_text()), smk


def test_the_report_writes_the_registry_names(tmp_path):
    from mbebench.report import FIGURES, TABLE_FILES

    assert TABLE_FILES == tuple(f.split("/")[-1] for f in registry.rule_files("tables"))
    assert FIGURES == tuple(o.name for o in registry.of_rule("plots"))


def test_the_report_writes_exactly_the_registry_files(tmp_path):
    from rowfactory import cumbe, imbea

    from mbebench.report import write_figures, write_tables

    rows = [imbea("A", algo_s=[2.0], count=3), cumbe("A", "cuMBE", algo_s=[1.0], count=3)]
    write_tables(rows, ["A"], tmp_path / "t")
    write_figures(rows, ["A"], tmp_path / "p")
    for folder, rule in (("t", "tables"), ("p", "plots")):
        written = sorted(p.name for p in (tmp_path / folder).iterdir())
        assert written == sorted(f.split("/")[-1] for f in registry.rule_files(rule)), rule
