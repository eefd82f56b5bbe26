"""Config errors are one line each, naming the key and the expected form (issue 19, item 7):
`onyl: [Unicode]` printed 288 lines (the schema and the config), `konekt:` 47 and
`engines.repeats: 0` 11.  And the old key `variants` works in an override file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import REPO, copy_workflow

from mbebench import configcheck, plan

SCHEMA = configcheck.load_schema(REPO / "workflow/schemas/config.schema.yaml")
BASE = {"datasets": {"g": {"konect": "g"}}}


@pytest.mark.parametrize("bad, line", [
    ({"onyl": ["Unicode"]}, ("onyl: unknown key (did you mean 'only'? known: konect, published, "
                             "download, only, fail_on, datasets, engines)")),
    ({"konekt": None}, "konekt: unknown key (did you mean 'konect'? "),
    ({"engines": {"repeats": 0}}, "engines.repeats: got 0; expected an integer >= 1"),
    ({"download": {"deadline_s": 0}}, "download.deadline_s: got 0; expected a number > 0"),
    ({"konect": {"base_url": 3}}, "konect.base_url: got 3; expected a string"),
    ({"datasets": {"g": {}}}, "datasets.g: give one of the keys konect, url, path"),
    ({"datasets": {"g": {"konect": "g", "sha256": "abc"}}},
     "datasets.g.sha256: got \"abc\"; expected a string matching ^[0-9a-fA-F]{64}$"),
    ({"fail_on": ["error", "oops"]}, "fail_on.1: got \"oops\"; expected one of \"error\""),
    ({"only": "Unicode"}, "only: got \"Unicode\"; expected a list (each a string)"),
    ({"datasets": {"g": {"konect": "g", "shards": 0}}},
     "datasets.g.shards: got 0; expected an integer >= 1 and <= 10000"),
    ({"datasets": {"g": {"konect": "g", "shards": 2.5}}},
     "datasets.g.shards: got 2.5; expected an integer"),
    ({"datasets": {"g": {"konect": "g", "shards_per_job": 0}}},
     "datasets.g.shards_per_job: got 0; expected an integer >= 1"),
    # issue 33, item 7: a non-ASCII name printed as "b\u00f6se"
    ({"datasets": {"böse": {"konect": "g"}}}, 'datasets: the name "böse" is not allowed'),
])
def test_each_error_is_one_line_naming_the_key_and_the_form(bad, line):
    with pytest.raises(plan.ConfigError) as e:
        configcheck.validate({**BASE, **bad}, REPO / "workflow/schemas/config.schema.yaml")
    lines = str(e.value).splitlines()
    assert len(lines) == 1 and lines[0].startswith(line), lines


def test_every_error_gets_its_line_and_defaults_are_filled():
    lines = configcheck.errors({**BASE, "onyl": [], "engines": {"repeats": 0, "timeout_s": -1}},
                               SCHEMA)
    assert [ln.split(":")[0] for ln in lines] == ["onyl", "engines.repeats", "engines.timeout_s"]
    cfg = dict(BASE)
    configcheck.validate(cfg, REPO / "workflow/schemas/config.schema.yaml")
    assert cfg["fail_on"] == ["error", "timeout", "mismatch", "unavailable"]
    assert cfg["download"]["deadline_s"] == 7200


def _dry(work: Path, overlay: dict) -> subprocess.CompletedProcess:
    (work / "o.yaml").write_text(yaml.safe_dump(overlay))
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1",
                           "--configfile", str(work / "o.yaml")],
                          cwd=work, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_snakemake_prints_one_line_per_config_error_and_no_schema(tmp_path):
    work = copy_workflow(tmp_path)
    for overlay, key in (({"onyl": ["Unicode"]}, "onyl"), ({"konekt": None}, "konekt"),
                         ({"engines": {"repeats": 0}}, "engines.repeats"),
                         ({"engines": {"cumbe": {"kk": 1}}}, "engines.cumbe")):
        res = _dry(work, overlay)
        assert res.returncode == 1
        errors = [ln for ln in res.stderr.splitlines() if ln.startswith("config error: ")]
        assert len(errors) == 1 and errors[0].startswith(f"config error: {key}"), res.stderr
        # Snakemake's own start-up lines, then ours: no schema, config or traceback
        rest = [ln for ln in (res.stdout + res.stderr).splitlines()
                if ln and ln not in errors and not ln.startswith(("Using workflow", "Config file"))]
        assert rest == [], rest


def test_the_old_key_variants_works_in_an_override_of_the_default_config():
    base = yaml.safe_load((REPO / "config/config.yaml").read_text())
    assert "variant" in base["engines"]["cumbe"]
    merged = yaml.safe_load((REPO / "config/config.yaml").read_text())
    merged["engines"]["cumbe"]["variants"] = ["noWS"]  # what Snakemake's merge gives
    plan.prefer_overrides(merged, base)
    runs = plan.plan_runs(merged, cores=4)
    assert {r.variant for r in runs.values() if r.engine == "cumbe"} == {"noWS"}
    # both names in one file stays an error
    both = yaml.safe_load((REPO / "config/config.yaml").read_text())
    both["engines"]["cumbe"]["variants"] = ["noWS"]
    with pytest.raises(plan.ConfigError, match="give 'variant' or its old name 'variants'"):
        plan.plan_runs(both, cores=4)
    plan.prefer_overrides(both, {"engines": {"cumbe": {"variant": ["noWS"],
                                                       "variants": ["noWS"]}}})
    with pytest.raises(plan.ConfigError, match="not both"):
        plan.plan_runs(both, cores=4)


def _shard_plan(engines: dict, **dataset):
    cfg = {"datasets": {"g": {"konect": "g", **dataset}, "h": {"konect": "h"}},
           "engines": {"repeats": 1, "timeout_s": 60, "cumbe": {"enabled": False},
                       "parmbe": {"enabled": False}, **engines}}
    runs = plan.plan_runs(cfg, 2)
    shards = plan.dataset_shards(cfg, ["g", "h"])
    plan.check_shards(shards, runs)
    return shards, runs


def test_shards_of_a_dataset_and_the_engines_that_can_take_them():
    shards, runs = _shard_plan({}, shards=4, shards_per_job=3)
    assert shards == {"g": plan.Sharding(4, 3), "h": plan.Sharding(1, 1)}
    assert shards["g"].groups() == [[0, 1, 2], [3]]
    assert _shard_plan({}, shards=2, shards_per_job=9)[0]["g"].per_job == 2
    # an engine without a shard parameter cannot be sharded: say which and what to do
    byo = {"toy": {"command": "{python} -c pass {graph}"}}
    with pytest.raises(plan.ConfigError) as e:
        _shard_plan(byo, shards=2)
    assert str(e.value) == ("datasets.g.shards: 2, but engines.toy takes no 'shard' parameter "
                            "(run toy); give it one, or leave g out of engines.toy.datasets")
    _shard_plan({"toy": {**byo["toy"], "datasets": ["h"]}}, shards=2)  # not on g: fine
    # a shard set by hand would be one shard of each shard run
    with pytest.raises(plan.ConfigError, match=r"engines\.imbea\.shard is set by hand \('1/2'"):
        _shard_plan({"imbea": {"shard": "1/2"}}, shards=3)
    _shard_plan({"imbea": {"shard": "1/2"}})  # unsharded datasets: a shard of one's own is fine


def test_a_yaml_syntax_error_names_the_file_and_the_line(tmp_path):
    """Issue 33, item 7: Snakemake's "Config file is not valid JSON or YAML" names neither."""
    bad = tmp_path / "c.yaml"
    bad.write_text("only: []\nengines:\n  imbea: {enabled: true\n  parmbe: x\n")
    with pytest.raises(plan.ConfigError) as e:
        configcheck.check_yaml(bad)
    assert str(e.value).startswith(f"{bad}, line 4, column 9: not valid YAML (expected ',' or")
    good = tmp_path / "ok.yaml"
    good.write_text("only: []\n")
    configcheck.check_yaml(good)
    configcheck.check_yaml(tmp_path / "missing.yaml")  # Snakemake names a missing file itself


@pytest.mark.slow
def test_snakemake_names_the_line_of_a_syntax_error_in_the_config_file(tmp_path):
    work = copy_workflow(tmp_path)
    config = work / "config/config.yaml"
    config.write_text(config.read_text() + "broken: [a, b\n")
    res = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1"], cwd=work,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert lines[-1].startswith("config error: config/config.yaml, line "), res.stderr[-2000:]
    assert "not valid YAML" in lines[-1] and "Traceback" not in res.stderr
