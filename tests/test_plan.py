from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from mbebench import plan

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


def test_schema_fills_defaults():
    cfg = {"datasets": {"g": {"konect": "g"}}}
    validate(cfg, SCHEMA)
    assert cfg["konect"]["base_url"] == "http://konect.cc/files/"
    assert cfg["engines"]["repeats"] == 3
    assert cfg["engines"]["cumbe"]["k"] == 2
    assert cfg["download"]["retries"] == 3


@pytest.mark.parametrize(
    "bad",
    [
        {"datasets": {}},
        {"datasets": {"g": {}}},
        {"datasets": {"g": {"konect": "g", "colour": "red"}}},
        {"datasets": {"g": {"konect": "g", "sha256": "xyz"}}},
        {"datasets": {"g": {"konect": "g"}}, "engines": {"cumbe": {"variants": ["fast"]}}},
        {"datasets": {"g": {"konect": "g"}}, "engines": {"repeats": 0}},
        {"datasets": {"bad name/": {"konect": "g"}}},
    ],
)
def test_schema_rejects_bad_configs(bad):
    with pytest.raises(Exception):
        validate(bad, SCHEMA)


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
    assert [r for r in runs if r.startswith("parmbe")] == ["parmbe-p1", "parmbe-p2", "parmbe-p4"]
    assert runs["parmbe-p4"].threads == 4 and runs["parmbe-p4"].params == {"processes": 4}
    cumbe = [r for r in runs if r.startswith("cumbe")]
    assert len(cumbe) == 8 and "cumbe-noWS-instr" in cumbe
    assert runs["cumbe-noWS"].gpu == 1 and runs["cumbe-noWS"].params["variant"] == "noWS"
    assert runs["cumbe-cuMBE-instr"].params["instrument"] is True
    assert runs["cumbe-cuMBE-instr"].repeats == 1 and runs["cumbe-cuMBE"].repeats == 3
    assert plan.parmbe_processes([16, 32], cores=2) == [2]


def test_plan_runs_honours_disabled_engines_and_overrides():
    cfg = load()
    cfg["engines"]["parmbe"]["enabled"] = False
    cfg["engines"]["cumbe"]["enabled"] = False
    cfg["engines"]["imbea"]["timeout_s"] = 5
    runs = plan.plan_runs(cfg, cores=2)
    assert list(runs) == ["imbea"] and runs["imbea"].timeout_s == 5
    cfg["engines"]["imbea"]["enabled"] = False
    with pytest.raises(plan.ConfigError):
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
