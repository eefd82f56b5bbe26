"""Engine specs: the one place an engine's parameters, defaults and limits live.

Checked here: the config is validated against the schema generated from each
spec (and the schema file holds no engine parameter), the specs agree with the
engines' own signatures and checks, and a new engine is one new file with no
edit to the plan, rows, tables, plots or schema."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from mbebench import engine, oracle, plan, plots, rows, runner, tables
from mbebench.report import speedup, summary
from mbebench.csr import from_edges, write_csr
from mbebench.spec import ConfigError, EngineSpec, Param

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
NAMES = list(engine.ENGINES)


def _config(**engines):
    cfg = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())
    # the given sections are enabled (the published codes are off unless they say so)
    cfg["engines"] = {"repeats": 1, **{n: {"enabled": False} for n in NAMES},
                      **{n: {"enabled": True, **s} for n, s in engines.items()}}
    validate(cfg, str(SCHEMA))
    return cfg


def _bad_and_good(p: Param) -> tuple[list, list]:
    """Values a parameter's limits refuse and accept, from its declaration."""
    good = [*Param.sweep(p.default), *p.choices]
    bad = []
    if p.type in (int, float):
        bad.append("text")
        if p.minimum is not None:
            good.append(p.minimum)
            bad.append(p.minimum - (1 if p.type is int else 0.5))
        if p.maximum is not None:
            good.append(p.maximum)
            bad.append(p.maximum + (p.multiple_of or 1))
        if p.multiple_of:
            bad.append((p.minimum or 0) + p.multiple_of + 1)
    elif p.type is str:
        bad += [7, "no-such-choice"] if p.choices else [7]
    elif p.type is bool:
        bad.append("yes")
    elif isinstance(p.type, tuple):  # e.g. cuMBE's devices: a count, or a string of a form
        bad.append(True)
        if int in p.type and p.minimum is not None:
            good.append(p.minimum)
            bad.append(p.minimum - 1)
        if str in p.type and p.pattern:
            bad.append("no such value!")
    if not p.nullable and p.type is not None:
        bad.append(None)
    return bad, [v for v in good if v is not None or p.nullable]


# --------------------------------------------------------------------------- schema


def test_the_schema_file_holds_no_engine_parameter():
    """Engine keys come from the specs only, so they cannot drift apart."""
    engines = yaml.safe_load(SCHEMA.read_text())["properties"]["engines"]
    assert set(engines["properties"]) == {"repeats", "timeout_s"}
    assert engines["additionalProperties"]["type"] == ["object", "null"]


@pytest.mark.parametrize("name", NAMES)
def test_the_plan_checks_a_section_against_the_specs_generated_schema(name):
    spec = engine.get_spec(name)
    schema = spec.section_schema()
    assert set(schema["properties"]) == (
        set(spec.run_options()) | {p.name for p in spec.params}
        | {a for p in spec.params for a in p.aliases})
    assert schema["additionalProperties"] is False
    for p in spec.params:
        default = list(p.default) if isinstance(p.default, tuple) else p.default
        assert schema["properties"][p.name]["default"] == default
        bad, good = _bad_and_good(p)
        assert bad and good, p.name
        for value in good:
            p.check(value, "x")
            runs = plan.plan_runs(_config(**{name: {p.name: value}}), cores=64)
            assert {r.params[p.name] for r in runs.values()} == {value}, (p.name, value)
        for value in bad:
            with pytest.raises(ConfigError):
                p.check(value, "x")
            with pytest.raises(ConfigError, match=f"engines.{name}.{p.name}: "):
                plan.plan_runs(_config(**{name: {p.name: value}}), cores=64)


@pytest.mark.parametrize("name", NAMES)
def test_every_default_passes_its_own_limits(name):
    for p in engine.get_spec(name).params:
        p.check_default()
    bad = Param("x", int, 0, minimum=1)
    with pytest.raises(ConfigError, match="default of x"):
        bad.check_default()


def test_cuda_threads_limits_are_the_engines():
    """The old schema allowed 1024 threads, which the engine refused: an error row per run."""
    threads = engine.get_spec("cumbe").param("threads")
    assert (threads.minimum, threads.maximum, threads.multiple_of) == (32, 512, 32)


# --------------------------------------------------------------------------- engines


def _entry_params(spec: EngineSpec):
    sig = inspect.signature(engine.load(spec.entry))
    return sig.parameters


@pytest.mark.parametrize("name", NAMES)
def test_the_entry_takes_every_parameter_with_the_specs_default(name):
    spec = engine.get_spec(name)
    params = _entry_params(spec)
    for p in spec.params:
        assert p.name in params, f"{spec.entry} has no argument {p.name!r}"
        own = params[p.name].default
        # None: the function's "not given" (e.g. ParMBE: all cores), never used by the pipeline
        assert own in (inspect.Parameter.empty, None, p.single_default), (p.name, own)


@pytest.mark.parametrize("name", NAMES)
def test_no_entry_swallows_unknown_parameters(name):
    params = _entry_params(engine.get_spec(name))
    assert not any(a.kind is a.VAR_KEYWORD for a in params.values())


def test_cumbe_variants_are_the_engines():
    from cumbe import engine as cumbe_engine
    from cumbe.spec import ABLATIONS, VARIANTS

    assert cumbe_engine.VARIANTS == ABLATIONS and VARIANTS[0] == "cuMBE"


def test_cpu_engines_accept_exactly_the_specs_sides():
    from baselines import imbea, parmbe

    g = from_edges([0, 1], [0, 1], 2, 2)
    for mod, check in ((imbea, imbea._resolve), (parmbe, parmbe.choose_side)):
        spec = engine.get_spec(mod.__name__.split(".")[-1])
        for side in spec.param("side").choices:
            check(g, side)
        with pytest.raises(ValueError):
            check(g, "top")
        with pytest.raises(ConfigError):
            spec.param("side").check("top", "x")


def test_side_means_one_thing_in_every_engine():
    """One vocabulary; ``auto`` is the larger sum of squared degrees, not the smaller side."""
    from baselines import imbea, parmbe
    from cumbe.prepare import choose_side as cumbe_side
    from mbebench.side import SIDES

    for name in ("imbea", "parmbe", "cumbe"):
        assert engine.get_spec(name).param("side").choices == SIDES
    # a star: the left side (1 vertex of degree 5: 25) is the smaller one and auto's
    star = from_edges([0] * 5, list(range(5)), 1, 5)
    # 3 left vertices of degree 1 (3) against 4 right ones, one of degree 3 (9): auto takes
    # the right side, the larger one
    parted = from_edges([0, 1, 2], [0, 0, 0], 3, 4)
    for graph, auto, smaller in ((star, "left", "left"), (parted, "right", "left")):
        assert imbea._resolve(graph, "auto") == auto
        assert imbea._resolve(graph, "smaller") == smaller
        assert parmbe.choose_side(graph, "auto") == (auto == "left")
        assert cumbe_side(graph, "auto") == (auto == "left")
        assert cumbe_side(graph, "larger") == (smaller != "left")


CUMBE_LIMITS = """
import json, sys
from cumbe.engine import run
from mbebench.csr import from_edges
empty = from_edges([], [], 1, 1)  # no candidates: the engine checks its arguments and stops
out = []
for key, value in json.loads(sys.argv[1]):
    try:
        run(empty, **{key: value})
        out.append(True)
    except ValueError:
        out.append(False)
print(json.dumps(out))
"""


@pytest.mark.cudasim
def test_cumbe_accepts_exactly_what_its_spec_allows():
    spec = engine.get_spec("cumbe")
    cases = [("threads", t) for t in range(0, 1100, 16)]
    cases += [("k", k) for k in (0, 1, 2, 24)]
    cases += [("variant", v) for v in (*spec.param("variant").choices, "noXX")]
    cases += [("side", s) for s in (*spec.param("side").choices, "top")]
    cases += [("device_memory_gib", m) for m in (None, 0, 0.5, 24, -1)]
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    res = subprocess.run([sys.executable, "-c", CUMBE_LIMITS, json.dumps(cases)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    engine_says = json.loads(res.stdout.splitlines()[-1])

    def spec_says(key, value):
        try:
            spec.param(key).check(value, "x")
            return True
        except ConfigError:
            return False

    # a config that validates must never give an error row for its parameters
    refused = [c for c, e in zip(cases, engine_says) if spec_says(*c) and not e]
    assert not refused, f"the spec allows, the engine refuses: {refused}"
    # nor the other way: the engine checks up front what the spec allows
    looser = [c for c, e in zip(cases, engine_says) if e and not spec_says(*c)]
    assert not looser, f"the engine accepts, the spec refuses: {looser}"


# --------------------------------------------------------------------------- a new engine

THROWAWAY = '''
from mbebench.engine import EngineResult
from mbebench.oracle import count_and_fingerprint
from mbebench.spec import EngineSpec, Param

SPEC = EngineSpec(
    name="throwaway",
    title="Throwaway",
    entry="throwaway_mbe:run",
    cpus="workers",
    params=(
        Param("workers", int, (1, 2), minimum=1, short="w", key=True, fit_cores=True),
        Param("mode", str, "fast", choices=("fast", "slow")),
    ),
)


def run(graph, *, workers, mode):
    count, fingerprint = count_and_fingerprint(graph)
    return EngineResult(count, fingerprint, 0.001 * workers,
                        stats={"worker_busy_s": [0.001] * workers})
'''


def test_a_new_engine_is_one_file_and_needs_no_other_edit(tmp_path, monkeypatch):
    (tmp_path / "throwaway_mbe.py").write_text(THROWAWAY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(engine.ENGINES, "throwaway", "throwaway_mbe:SPEC")

    with pytest.raises(ConfigError, match="engines.throwaway: unknown key 'mdoe'"):
        plan.plan_runs(_config(imbea={}, throwaway={"mdoe": "slow"}), cores=2)
    runs = plan.plan_runs(_config(imbea={}, throwaway={"mode": ["fast", "slow"]}), cores=2)
    mine = [r for r in runs.values() if r.engine == "throwaway"]
    assert [(r.label, r.threads) for r in mine] == [
        ("Throwaway w=1 mode=fast", 1), ("Throwaway w=1 mode=slow", 1),
        ("Throwaway w=2 mode=fast", 2), ("Throwaway w=2 mode=slow", 2)]

    g = from_edges([0, 0, 1, 2, 2, 3], [0, 1, 1, 1, 2, 0], 4, 3)
    write_csr(g, tmp_path / "g.csr")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = []
    for run in runs.values():
        job = run.job()
        row = runner.run(dataset="g", run_id=run.run_id, engine=run.engine,
                         graph=tmp_path / "g.csr", params=job["params"], repeats=1,
                         timeout_s=120, env=env, label=job["label"], variant=job["variant"],
                         timed=job["timed"], entry=job["entry"])
        assert row["status"] == "ok", row["message"]
        path = tmp_path / "runs" / f"{run.run_id}.json"
        runner.atomic.write_json(path, row)
        out.append(path)

    loaded = rows.load_rows(out)
    tables.check_agreement(loaded)
    assert loaded[0]["count"] == oracle.count_and_fingerprint(g)[0]
    summ = summary.summary_table(loaded, ["g"])
    assert summ.attrs["configs"] == ["iMBEA", *[r.label for r in mine]]
    speed = speedup.speedup_table(loaded, ["g"])
    assert "Throwaway w=2 mode=slow [s]" in speed.columns
    tables.write_all(loaded, ["g"], tmp_path / "tables")
    assert len(plots.write_all(loaded, ["g"], tmp_path / "plots")) == 8


def test_the_check_in_rounds_is_cumbes_alone_in_the_grid():
    """A rounds sweep adds runs of the cuMBE variant only: the ablations stay the paper's
    algorithm (cumbe.spec's skip); without the sweep the grid is as before."""
    from cumbe.spec import SPEC

    grid = SPEC.grid({"variant": ["cuMBE", "noRS", "noES", "noWS"], "rounds": [False, True],
                      "instrument": [False, True]}, "engines.cumbe", 4)
    assert sorted((g["variant"], g["rounds"], g["instrument"]) for g in grid if g["rounds"]) == [
        ("cuMBE", True, False), ("cuMBE", True, True)]
    assert len(grid) == 4 * 2 + 2
    plain = SPEC.grid({"variant": ["cuMBE", "noRS"], "instrument": False}, "engines.cumbe", 4)
    assert [(g["variant"], g["rounds"]) for g in plain] == [("cuMBE", False), ("noRS", False)]
