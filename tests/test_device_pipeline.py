"""benchmarks/device-pipeline: the one command that runs the real pipeline on a GPU machine.
What can be checked without a GPU: the script parses, its config plans the intended runs, and
the kernel builds it warms are the ones the plan runs (so no run compiles while timed)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from mbebench import plan

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "benchmarks" / "device-pipeline"


def _config() -> dict:
    from snakemake.utils import validate

    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    over = yaml.safe_load((HERE / "overrides.yaml").read_text())
    for key, val in over.items():
        if isinstance(val, dict):
            merged = dict(cfg.get(key) or {})
            for k, v in val.items():
                merged[k] = {**merged.get(k, {}), **v} if isinstance(v, dict) else v
            cfg[key] = merged
        else:
            cfg[key] = val
    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    return cfg


def test_the_script_parses(tmp_path):
    def parse(path):
        return subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)

    p = parse(HERE / "run.sh")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    broken = tmp_path / "run.sh"  # the check can fail: the script with its last 'fi' gone
    text = (HERE / "run.sh").read_text()
    cut = text.rindex("\nfi")
    broken.write_text(text[:cut] + text[cut + 3:])
    assert parse(broken).returncode != 0


def test_the_device_config_plans_every_engine_once_per_dataset_within_the_budget():
    cfg = _config()
    runs = plan.plan_runs(cfg, cores=16)
    assert sorted(runs) == sorted([
        "imbea", "parmbe-p1", "parmbe-p16",
        *[f"cumbe-{v}{s}" for v in ("cuMBE", "noRS", "noES", "noWS") for s in ("", "-instr")],
        "cumbe-cuMBE-rounds", "cumbe-cuMBE-instr-rounds"])
    assert all(r.repeats == 3 and r.timeout_s == 120 for r in runs.values() if r.timed)
    datasets = plan.selected_datasets(cfg)
    assert len(datasets) == 13  # the 5 the mirror lacks become 'unavailable' rows
    assert len(plan.planned_rows(datasets, runs)) == 13 * 13


def test_the_warmed_kernel_builds_are_the_planned_ones():
    runs = plan.plan_runs(_config(), cores=16)
    planned = {f"{r.params['variant']}{'-instr' if r.params['instrument'] else ''}"
               f"{'-rounds' if r.params['rounds'] else ''}:{r.params['threads']}"
               for r in runs.values() if r.engine == "cumbe"}
    script = (HERE / "run.sh").read_text()
    warm = script.split("benchmarks/gpu/warm.py --jobs", 1)[1].split(">", 1)[0]
    assert set(re.findall(r"\b\w+(?:-instr)?(?:-rounds)?:\d+", warm)) == planned


def test_the_script_runs_where_the_user_says():
    """A work folder (and optionally a mirror folder) as arguments, nothing from elsewhere."""
    script = (HERE / "run.sh").read_text()
    assert 'WORK=${1:?' in script and "MIRROR=${2:-}" in script
    assert "--configfile" in script and "benchmarks/device-pipeline/overrides.yaml" in script
    readme = (HERE / "README.md").read_text()
    assert "bash benchmarks/device-pipeline/run.sh" in readme
