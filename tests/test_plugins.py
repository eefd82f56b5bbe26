"""Bring your own engine: plug-in config entries, the command-line protocol, graph exports.

The example engines are tests/plugins/mbe_toy.py (Python) and mbe_toy_cli.py (a
program); counts are checked against the brute-force oracle."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from mbebench import command, csr, export, konect, oracle, plan, runner
from mbebench.fingerprint import to_hex

REPO = Path(__file__).resolve().parents[1]
PLUGINS = REPO / "tests" / "plugins"
SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
ENV = {"PYTHONPATH": os.pathsep.join([str(PLUGINS), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture(autouse=True)
def plugins_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(PLUGINS))


def config(**engines):
    cfg = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())
    cfg["engines"] = {"repeats": 1, "parmbe": {"enabled": False},
                      "cumbe": {"enabled": False}, **engines}
    validate(cfg, SCHEMA)
    return cfg


def runs_of(name, **engines):
    return [r for r in plan.plan_runs(config(**engines), cores=2).values() if r.engine == name]


# --------------------------------------------------------------------------- config


def test_python_plugin_takes_its_parameters_from_the_signature():
    (left, right) = runs_of("toy", toy={"module": "mbe_toy:run",
                                        "params": {"side": ["left", "right"]}})
    assert (left.entry, left.params, left.label) == ("mbe_toy:run", {"side": "left"},
                                                     "toy side=left")
    assert (right.run_id, right.timed, right.threads, right.gpu) == ("toy-sideright", True, 1, 0)
    (default,) = runs_of("toy", toy={"module": "mbe_toy:run"})
    assert default.params == {"side": "left"}  # the function's default, recorded in the row


@pytest.mark.parametrize(
    "entry, needle",
    [
        ({"module": "mbe_toy:run", "params": {"sied": "left"}},
         "engines.toy.params: unknown parameter 'sied' of mbe_toy:run (known: side)"),
        ({"module": "mbe_toy:run", "params": {"side": 3}}, "engines.toy.side: 3 is not of type"),
        ({"module": "no_such_module:run"}, "engines.toy.module: cannot load 'no_such_module:run'"),
        ({"module": "mbe_toy:nope"}, "has no attribute 'nope'"),
        ({"module": "mbe_toy:run", "input": "adj"}, "a Python engine gets the CSR graph"),
        ({"module": "mbe_toy:run", "command": "x {graph}"}, "give either module or command"),
        ({"module": "mbe_toy:run", "side": "left"}, "unknown key 'side'"),
        ({"command": "true {graph} {thread}", "params": {"threads": 2}},
         "placeholder {thread} is neither a key of params"),
        ({"command": "true {graph}", "params": {"threads": 2}},
         "engines.toy.params.threads: not used in the command"),
        ({"command": "true --in results/x.adj"}, "never names the graph file"),
        ({"command": "true {graph:>5}"}, "use plain {name}"),
        ({"command": "true {graph}", "input": "xml"}, "engines.toy.input"),
        ({"command": "true {graph}", "cpus": "threads"}, "neither a number nor a parameter"),
    ],
)
def test_plugin_config_errors_name_the_engine_and_key(entry, needle):
    with pytest.raises(plan.ConfigError) as e:
        runs_of("toy", toy=entry)
    assert needle in str(e.value)


def test_command_plugin_parameters_and_cpus():
    runs = runs_of("prog", prog={"command": ["true", "-t", "{threads}", "{graph}"],
                                 "input": "konect", "params": {"threads": [1, 2]},
                                 "cpus": "threads", "title": "Prog"})
    assert [(r.label, r.threads, r.input, r.command) for r in runs] == [
        ("Prog threads=1", 1, "konect", ("true", "-t", "{threads}", "{graph}")),
        ("Prog threads=2", 2, "konect", ("true", "-t", "{threads}", "{graph}")),
    ]
    assert all(r.entry is None and r.timed for r in runs)


def test_a_plugin_cannot_take_a_registered_name_or_label():
    with pytest.raises(plan.ConfigError, match="label 'iMBEA'"):
        runs_of("x", x={"module": "mbe_toy:run", "title": "iMBEA"})


@pytest.mark.parametrize("program, needle", [
    ("no-such-mbe-program", "engines.toy.command: program 'no-such-mbe-program' not found on PATH"),
    ("bin/no-such-mbe", "engines.toy.command: program 'bin/no-such-mbe' not found (no such file"),
    ("{python} -m mbe_toy_cli", None),  # this interpreter: found
])
def test_a_missing_program_is_a_config_error_before_anything_runs(program, needle):
    entry = {"command": f"{program} {{graph}}"}
    if needle is None:
        assert runs_of("toy", toy=entry)
        return
    with pytest.raises(plan.ConfigError) as e:
        runs_of("toy", toy=entry)
    assert str(e.value).startswith(needle)


def test_a_script_that_is_not_executable_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mbe.sh").write_text("#!/bin/sh\n")
    with pytest.raises(plan.ConfigError, match="program './mbe.sh' is not executable"):
        runs_of("toy", toy={"command": "./mbe.sh {graph}"})


def test_disabled_plugin_is_not_even_loaded():
    cfg = config(toy={"module": "no_such_module:run", "enabled": False})
    assert [r.engine for r in plan.plan_runs(cfg, cores=2).values()] == ["imbea"]


# --------------------------------------------------------------------------- protocol


@pytest.mark.parametrize(
    "stdout, want",
    [
        ("count: 12\ntime_s: 0.5\n", {"count": 12, "time_s": 0.5}),
        ("reading...\ncount:3\ntime_s:1e-3\nfingerprint: 0xff\ncompile_s: 2\n",
         {"count": 3, "time_s": 0.001, "fingerprint": 255, "compile_s": 2.0}),
        ("count: 1\ncount: 2\ntime_s: 0\n", {"count": 2, "time_s": 0.0}),  # the last one counts
    ],
)
def test_output_format(stdout, want):
    assert command.parse_output(stdout) == want


@pytest.mark.parametrize(
    "stdout, needle",
    [
        ("time_s: 1\n", "no 'count: ...' line"),
        ("count: 1\n", "no 'time_s: ...' line"),
        ("count: many\ntime_s: 1\n", "unreadable output line 'count: many': invalid literal"),
        ("count: 1\ntime_s: soon\n", "unreadable output line 'time_s: soon'"),
        ("count: -1\ntime_s: 1\n", "must be >= 0"),
        ("count: 1\ntime_s: 1\nfingerprint: 12\n", "not 0x<hex>"),
        ("count: 1\ntime_s: 1\nfingerprint: 0x1ffffffffffffffff\n", "64 bits"),
    ],
)
def test_bad_output_is_an_error(stdout, needle):
    with pytest.raises(command.CommandError, match=needle.replace("(", r"\(")):
        command.parse_output(stdout)


# --------------------------------------------------------------------------- exports


@pytest.fixture
def graph():
    # isolated left vertex 2 and right vertex 3 are never in a CSR from convert, but allowed
    return csr.from_edges([0, 0, 1, 3, 3, 3], [0, 1, 1, 0, 2, 4], 4, 5)


def test_konect_export_parses_back_to_the_same_graph(graph, tmp_path):
    out = tmp_path / "g.konect"
    export.write(graph, "konect", out)
    lines = out.read_text().splitlines()
    assert lines[:2] == ["% bip unweighted", "% 6 4 5"]
    edges = [tuple(int(x) for x in ln.split()) for ln in lines[2:]]
    assert edges == [(1, 1), (1, 2), (2, 2), (4, 1), (4, 3), (4, 5)]  # 1-based, sorted
    parsed = konect.parse_edge_list(out, dataset="g")  # the pipeline's own reader agrees
    assert list(parsed.left_ids[parsed.left]) == [u for u, _ in edges]
    assert list(parsed.right_ids[parsed.right]) == [v for _, v in edges]


def test_adj_export_lists_right_neighbours_per_left_vertex(graph, tmp_path):
    out = tmp_path / "g.adj"
    export.write(graph, "adj", out)
    assert out.read_text() == "0 1\n1\n\n0 2 4\n"
    with pytest.raises(ValueError, match="unknown export format"):
        export.write(graph, "gml", tmp_path / "g.gml")


# --------------------------------------------------------------------------- running


@pytest.fixture
def hubs_files(tmp_path):
    text = (REPO / ".test" / "graphs" / "out.hubs").read_text()
    pairs = [tuple(map(int, ln.split()[:2])) for ln in text.splitlines()
             if ln.strip() and not ln.startswith("%")]
    lefts = sorted({u for u, _ in pairs})
    rights = sorted({v for _, v in pairs})
    g = csr.from_edges([lefts.index(u) for u, _ in pairs], [rights.index(v) for _, v in pairs],
                       len(lefts), len(rights))
    csr.write_csr(g, tmp_path / "hubs.csr")
    files = {"csr": tmp_path / "hubs.csr"}
    for fmt in export.FORMATS:
        files[fmt] = tmp_path / f"hubs.{fmt}"
        export.write(g, fmt, files[fmt])
    return g, files


def _cli_run(files, fmt, cmd, params=None, timeout=60, repeats=2):
    return runner.run(dataset="hubs", run_id="toy-cli", engine="toy-cli", graph=files["csr"],
                      params=params or {}, repeats=repeats, timeout_s=timeout, env=ENV,
                      label="toy-cli", command=cmd, input_path=files[fmt])


@pytest.mark.parametrize("fmt", export.FORMATS)
def test_command_engine_gets_a_row_with_its_count(hubs_files, fmt):
    g, files = hubs_files
    cmd = ["{python}", "-m", "mbe_toy_cli", "--format", fmt, "{graph}"]
    row = _cli_run(files, fmt, cmd)
    count, _ = oracle.count_and_fingerprint(g)
    assert row["status"] == "ok", row["message"]
    assert row["count"] == count and row["fingerprint"] is None
    assert len(row["algo_s"]) == 2 and row["command"] == cmd
    assert row["graph"] == {"n_left": g.n_left, "n_right": g.n_right, "n_edges": g.n_edges}


def test_command_engine_parameters_and_fingerprint_reach_the_program(hubs_files, tmp_path):
    g, files = hubs_files
    count, fp = oracle.count_and_fingerprint(g)
    script = tmp_path / "echo_engine.py"
    script.write_text(
        "import sys\n"
        "print('count:', sys.argv[2]); print('time_s: 0.25'); print('fingerprint:', sys.argv[3])\n"
        "print('args', sys.argv[1:], file=sys.stderr)\n"
    )
    cmd = ["{python}", str(script), "{graph}", "{count}", "{fp}", "{n_left}x{n_right}"]
    row = _cli_run(files, "csr", cmd, params={"count": count, "fp": to_hex(fp)}, repeats=1)
    assert row["status"] == "ok", row["message"]
    assert (row["count"], row["fingerprint"], row["algo_s"]) == (count, to_hex(fp), [0.25])


def test_failing_command_is_an_error_row_with_its_last_words(hubs_files, capfd):
    _, files = hubs_files
    cmd = ["{python}", "-c", "import sys; print('count: 3'); sys.exit('out of memory, sorry')",
           "{graph}"]
    row = _cli_run(files, "csr", cmd)
    assert row["status"] == "error" and row["count"] is None
    assert row["message"].endswith("exited with code 1: out of memory, sorry")
    assert "Traceback" in capfd.readouterr().err  # the log has the whole story


def test_command_without_the_protocol_lines_is_an_error_row(hubs_files):
    _, files = hubs_files
    row = _cli_run(files, "csr", ["{python}", "-c", "print('done')", "{graph}"])
    assert row["status"] == "error"
    assert "printed no 'count: ...' line and no 'time_s: ...' line" in row["message"]
    row = _cli_run(files, "csr", ["/no/such/program", "{graph}"])
    assert row["status"] == "error" and "cannot run '/no/such/program'" in row["message"]


def test_command_past_its_timeout_is_killed_with_its_children(hubs_files, tmp_path):
    _, files = hubs_files
    marker = f"mbe-sleep-{os.getpid()}-{time.monotonic_ns()}"
    cmd = ["{python}", "-c", f"import time; time.sleep(120)  # {marker}", "{graph}"]
    t0 = time.monotonic()
    row = _cli_run(files, "csr", cmd, timeout=2)
    assert row["status"] == "timeout" and time.monotonic() - t0 < 20
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


def test_python_plugin_runs_through_the_runner(hubs_files):
    g, files = hubs_files
    count, fp = oracle.count_and_fingerprint(g)
    for side in ("left", "right"):
        row = runner.run(dataset="hubs", run_id="toy", engine="toy", graph=files["csr"],
                         params={"side": side}, entry="mbe_toy:run", env=ENV, label="toy")
        assert row["status"] == "ok", row["message"]
        assert (row["count"], row["fingerprint"]) == (count, to_hex(fp))


def test_toy_cli_is_a_standalone_program(hubs_files):
    """It imports nothing from mbebench: any program can take its place."""
    _, files = hubs_files
    res = subprocess.run([sys.executable, str(PLUGINS / "mbe_toy_cli.py"), "--format", "adj",
                          str(files["adj"])], capture_output=True, text=True, check=True,
                         env={"PATH": os.environ.get("PATH", "")})
    assert "count: " in res.stdout and "mbebench" not in (PLUGINS / "mbe_toy_cli.py").read_text(
    ).split('"""', 2)[2]
