from pathlib import Path

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from cumbe.spec import SPEC as CUMBE
from mbebench import plan
from mbebench.spec import fit_cores

REPO = Path(__file__).resolve().parents[1]
SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
PAPER_DATASETS = {
    "DBLP-author": "dblp-author",
    "DBpedia_locations": "dbpedia-location",
    "Marvel": "marvel",
    "YouTube": "youtube-groupmemberships",
    "IMDB-actor": "actor2",
    "stackoverflow": "stackexchange-stackoverflow",
    "BookCrossing": "bookcrossing_full-rating",
    "corporate-leadership": "brunson_corporate-leadership",
    "movielens-t-i": "movielens-10m_ti",
    "movielens-u-i": "movielens-10m_ui",
    "movielens-u-t": "movielens-10m_ut",
    "UCforum": "opsahl-ucforum",
    "Unicode": "unicodelang",
}


def load(path=REPO / "config" / "config.yaml"):
    cfg = yaml.safe_load(Path(path).read_text())
    validate(cfg, SCHEMA)  # fills defaults
    return cfg


def test_main_config_lists_all_13_paper_datasets_with_konect_names():
    cfg = load()
    assert {k: v["konect"] for k, v in cfg["datasets"].items()} == PAPER_DATASETS


def test_paper_datasets_match_shared_list(shared_dir):
    text = (shared_dir / "datasets.md").read_text()
    for name, konect in PAPER_DATASETS.items():
        assert f"| {name} | {konect} |" in text


def test_schema_fills_defaults_and_the_specs_fill_the_engines():
    cfg = {"datasets": {"g": {"konect": "g"}}}
    validate(cfg, SCHEMA)
    assert cfg["konect"]["base_url"] == "http://konect.cc/files/"
    assert cfg["engines"]["repeats"] == 3
    assert cfg["download"]["retries"] == 3
    # engine parameters are not in the schema file: the run plan takes them from the specs
    assert "cumbe" not in cfg["engines"]
    run = plan.plan_runs(cfg, cores=2)["cumbe-cuMBE"]
    assert run.params["k"] == CUMBE.param("k").default == 48
    assert run.params["threads"] == CUMBE.param("threads").default == 128


@pytest.mark.parametrize(
    "bad",
    [
        {"datasets": {}},
        {"datasets": {"g": {}}},
        {"datasets": {"g": {"konect": "g", "colour": "red"}}},
        {"datasets": {"g": {"konect": "g", "sha256": "xyz"}}},
        {"datasets": {"g": {"konect": "g"}}, "engines": {"repeats": 0}},
        {"datasets": {"g": {"konect": "g"}}, "engines": {"cumbe": [1, 2]}},
        {"datasets": {"g": {"konect": "g"}}, "engines": {"bad name/": {}}},
        {"datasets": {"bad name/": {"konect": "g"}}},
    ],
)
def test_schema_rejects_bad_configs(bad):
    with pytest.raises(WorkflowError, match="Error validating config"):
        validate(bad, SCHEMA)


@pytest.mark.parametrize(
    "engines, needle",
    [
        ({"cumbe": {"variants": ["fast"]}}, "engines.cumbe.variants: 'fast' is not one of"),
        ({"cumbe": {"variant": ["cuMBE", "fast"]}}, "engines.cumbe.variant"),
        ({"cumbe": {"kk": 2}}, "engines.cumbe: unknown key 'kk'"),
        ({"cumbe": {"threads": 1024}}, "engines.cumbe.threads: 1024 is greater than the maximum"),
        ({"cumbe": {"threads": 48}}, "engines.cumbe.threads: 48 is not a multiple of 32"),
        ({"cumbe": {"k": 0}}, "engines.cumbe.k: 0 is less than the minimum of 1"),
        ({"cumbe": {"variant": "cuMBE", "variants": ["noWS"]}}, "not both"),
        ({"cumbe": {"device_memory_gib": -1}}, "engines.cumbe.device_memory_gib"),
        ({"parmbe": {"processess": [1]}}, "engines.parmbe: unknown key 'processess'"),
        ({"parmbe": {"processes": []}}, "engines.parmbe.processes"),
        ({"imbea": {"side": "top"}}, "engines.imbea.side: 'top' is not one of"),
        ({"imbea": {"simulate": True}}, "engines.imbea: unknown key 'simulate'"),
        ({"imbae": {}}, "engines.imbae: unknown engine 'imbae'"),
        ({"cumbe": {"module": "x:run"}}, "registered engine"),
    ],
)
def test_engine_config_errors_name_the_engine_and_key_before_any_run(engines, needle):
    cfg = load()
    cfg["engines"].update(engines)
    with pytest.raises(plan.ConfigError) as e:
        plan.plan_runs(cfg, cores=2)
    assert needle in str(e.value)


def test_adding_a_dataset_is_one_entry():
    cfg = load()
    cfg["datasets"]["my-graph"] = {"konect": "my-konect-name"}
    validate(cfg, SCHEMA)
    assert "my-graph" in plan.selected_datasets(cfg)
    src = plan.dataset_source(cfg, "my-graph")
    assert src.kind == "url"
    assert src.location == "http://konect.cc/files/download.tsv.my-konect-name.tar.bz2"


def test_sources_url_override_path_and_base_url_without_slash():
    cfg = {
        "konect": {"base_url": "file:///mirror"},
        "datasets": {
            "a": {"konect": "x"},
            "b": {"konect": "x", "url": "http://h/b.tar.bz2", "sha256": "0" * 64},
            "c": {"path": "graphs/out.c"},
        },
    }
    assert plan.dataset_source(cfg, "a").location == "file:///mirror/download.tsv.x.tar.bz2"
    assert plan.dataset_source(cfg, "b") == plan.Source("url", "http://h/b.tar.bz2", "0" * 64)
    assert plan.dataset_source(cfg, "c").kind == "path"
    with pytest.raises(plan.ConfigError, match="unknown dataset 'd'"):
        plan.dataset_source(cfg, "d")


def test_only_selects_in_config_order_and_rejects_unknown():
    cfg = load()
    cfg["only"] = ["Unicode", "Marvel"]
    assert plan.selected_datasets(cfg) == ["Marvel", "Unicode"]
    cfg["only"] = ["Marvel", "Narnia"]
    with pytest.raises(plan.ConfigError, match="Narnia"):
        plan.selected_datasets(cfg)


def test_plan_runs_caps_parmbe_at_cores_and_builds_variants():
    cfg = load()
    runs = plan.plan_runs(cfg, cores=4)
    parmbe = [r for r in runs.values() if r.engine == "parmbe"]
    assert [r.params["processes"] for r in parmbe] == [1, 2, 4]
    p4 = next(r for r in parmbe if r.params["processes"] == 4)
    assert p4.threads == 4 and p4.params == {"processes": 4, "side": "smaller", "shard": "0/1"}
    assert p4.label == "ParMBE p=4" and p4.variant is None and p4.timed
    cumbe = [r for r in runs.values() if r.engine == "cumbe"]
    # the paper's four variants, and cuMBE with the check in rounds beside it (a column of
    # its own; the ablations keep the paper's check)
    assert len(cumbe) == 10
    assert {(r.variant, r.params["instrument"], r.params["rounds"]) for r in cumbe} == {
        (v, i, False) for v in ("cuMBE", "noRS", "noES", "noWS") for i in (False, True)} | {
        ("cuMBE", False, True), ("cuMBE", True, True)}
    assert {r.label for r in cumbe if r.params["rounds"]} == {"cuMBE rounds",
                                                              "cuMBE instr rounds"}
    nows = next(r for r in cumbe if r.variant == "noWS" and not r.params["instrument"])
    assert nows.gpu == 1 and nows.threads == 1  # CUDA threads per block are not CPUs
    assert nows.params["threads"] == 128 and nows.label == "cuMBE noWS"
    instr = [r for r in cumbe if r.params["instrument"]]
    assert all(not r.timed and r.repeats == 1 for r in instr)
    assert all(r.timed and r.repeats == 3 for r in cumbe if r not in instr)
    assert fit_cores([16, 32], cores=2) == [2]
    # every parameter is in the row, and the run id is only a unique file name
    assert all(set(r.params) == {p.name for p in CUMBE.params} for r in cumbe)
    assert len({r.run_id for r in runs.values()}) == len(runs)


def test_a_sweep_is_a_config_list():
    cfg = load()
    cfg["engines"]["cumbe"].update(variant="cuMBE", instrument=False, rounds=False,
                                   k=[2, 8, 24])
    cfg["engines"]["parmbe"]["processes"] = [2]
    runs = plan.plan_runs(cfg, cores=2)
    cumbe = [r for r in runs.values() if r.engine == "cumbe"]
    assert [(r.params["k"], r.label) for r in cumbe] == [
        (2, "cuMBE k=2"), (8, "cuMBE k=8"), (24, "cuMBE k=24")]
    assert [r.run_id for r in cumbe] == ["cumbe-cuMBE-k2", "cumbe-cuMBE-k8", "cumbe-cuMBE-k24"]
    assert all(r.variant == "cuMBE" and r.timed for r in cumbe)
    # a key parameter keeps its place in the name when it is not swept
    assert [r.label for r in runs.values() if r.engine == "parmbe"] == ["ParMBE p=2"]


def test_old_variants_key_still_works():
    cfg = load()
    cfg["engines"]["cumbe"].pop("variant")
    cfg["engines"]["cumbe"]["variants"] = ["noWS"]
    runs = plan.plan_runs(cfg, cores=2)
    assert {r.variant for r in runs.values() if r.engine == "cumbe"} == {"noWS"}


def test_simulate_and_require_gpu_go_to_the_run():
    cfg = load(REPO / ".test" / "config" / "config.yaml")
    runs = plan.plan_runs(cfg, cores=2)
    cu = runs["cumbe-cuMBE"]
    assert cu.env == {"NUMBA_ENABLE_CUDASIM": "1"} and cu.simulate and not cu.require_gpu
    assert runs["imbea"].env == {}
    job = cu.job()
    assert job["params"] == cu.params and job["entry"] == "cumbe.engine:run"
    assert job["label"] == "cuMBE" and job["timed"] is True and job["variant"] == "cuMBE"


def test_plan_runs_honours_disabled_engines_and_overrides():
    cfg = load()
    cfg["engines"]["parmbe"]["enabled"] = False
    cfg["engines"]["cumbe"]["enabled"] = False
    cfg["engines"]["imbea"]["timeout_s"] = 5
    runs = plan.plan_runs(cfg, cores=2)
    assert list(runs) == ["imbea"] and runs["imbea"].timeout_s == 5
    cfg["engines"]["imbea"]["enabled"] = False
    with pytest.raises(plan.ConfigError, match="no engine is enabled"):
        plan.plan_runs(cfg, cores=2)


def test_smoke_config_is_valid_and_small():
    cfg = load(REPO / ".test" / "config" / "config.yaml")
    assert cfg["engines"]["cumbe"]["simulate"] is True
    for name in plan.selected_datasets(cfg):
        src = plan.dataset_source(cfg, name)
        local = src.location.removeprefix("konect/") if src.kind == "url" else src.location
        assert (REPO / ".test" / (src.location if src.kind == "path" else "konect/" + local)).is_file()


def test_engine_dataset_filter_limits_rows():
    cfg = load()
    cfg["engines"]["cumbe"]["datasets"] = ["Marvel"]
    runs = plan.plan_runs(cfg, cores=2)
    rows = plan.planned_rows(["Marvel", "Unicode"], runs)
    assert "results/runs/Marvel/cumbe-noRS.json" in rows
    assert "results/runs/Unicode/cumbe-noRS.json" not in rows
    assert "results/runs/Unicode/imbea.json" in rows
    cfg["engines"]["cumbe"]["datasets"] = ["Atlantis"]
    with pytest.raises(plan.ConfigError, match="Atlantis"):
        plan.plan_runs(cfg, cores=2)


def test_the_plan_counts_the_machine_s_cores_and_names_what_it_drops(monkeypatch):
    """Issue 33, item 2: the plan took Snakemake's --cores, so `--cores 1` after a full run
    dropped the p=2 column, and nothing said so.  The machine's cores (the CPUs this process
    may use) decide; a cluster's declared cores override them; every dropped value is named."""
    monkeypatch.setattr(plan.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert plan.machine_cores() == 4 and plan.machine_cores(16) == 16
    cfg = load()
    runs = plan.plan_runs(cfg)  # no core count: the machine's
    assert [r.params["processes"] for r in runs.values() if r.engine == "parmbe"] == [1, 2, 4]
    assert plan.dropped_runs(cfg, 4) == [
        "dropped: ParMBE p=8, p=16 (engines.parmbe.processes above this machine's 4 cores; "
        "docs/plan.md)"]
    assert plan.dropped_runs(cfg, 16) == []
    cfg["engines"]["parmbe"]["processes"] = [8, 16]  # none fits: the core count runs instead
    assert plan.dropped_runs(cfg, 4, "the profile's") == [
        "dropped: ParMBE p=8, p=16 (engines.parmbe.processes above the profile's 4 cores; "
        "docs/plan.md); p=4 runs instead"]
    cfg["engines"]["parmbe"]["enabled"] = False
    assert plan.dropped_runs(cfg, 1) == []
