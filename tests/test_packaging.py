"""The pins in pyproject.toml, environment.yml and the rules' conda env agree."""

import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _pyproject_pins():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    reqs = meta["dependencies"] + meta["optional-dependencies"]["test"]
    return dict(r.split("==") for r in reqs)


def _conda_pins(path):
    env = yaml.safe_load(path.read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    return dict(r.split("==") for r in pip if "==" in r)


def test_every_dependency_is_pinned_exactly():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for req in meta["dependencies"] + meta["optional-dependencies"]["test"]:
        assert "==" in req, req


def test_environment_yml_matches_pyproject():
    assert _conda_pins(REPO / "environment.yml") == _pyproject_pins()


def test_rule_env_matches_runtime_pins():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    runtime = dict(r.split("==") for r in meta["dependencies"])
    assert _conda_pins(REPO / "workflow" / "envs" / "mbe.yaml") == runtime


def test_numpy_stays_below_2_5_for_numba_cuda():
    major, minor, *_ = (int(x) for x in _pyproject_pins()["numpy"].split("."))
    assert (major, minor) < (2, 5)


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version

    for name, pinned in _pyproject_pins().items():
        assert version(name) == pinned, name


def test_license_is_an_spdx_expression_with_its_text_shipped():
    toml = tomllib.loads((REPO / "pyproject.toml").read_text())
    meta = toml["project"]
    # the table form ({text = ...}) is deprecated by setuptools; the string needs 77 or later
    assert isinstance(meta["license"], str)
    for name in meta["license-files"]:
        assert (REPO / name).is_file(), name
    assert "setuptools>=77" in toml["build-system"]["requires"]
