"""mbebench.rows: loading, validating and flattening result rows."""

from __future__ import annotations

import json
import math

import pytest
from rowfactory import cumbe, imbea, make_row, parmbe

from mbebench.rows import (
    configs,
    graph_meta,
    load_rows,
    ordered_datasets,
    rows_frame,
    select,
    status_text,
    validate_row,
)


def _write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return p


def test_load_rows_round_trip_and_directory(tmp_path):
    rows = [
        imbea("Marvel", algo_s=[1.0, 2.0, 3.0]),
        cumbe("Marvel", "cuMBE", "skipped", message="no CUDA device"),
        parmbe("Marvel", 2, "timeout", timeout_s=600),
        cumbe("Marvel", "noWS", "error", instr=True, message="boom"),
    ]
    d = tmp_path / "runs" / "Marvel"
    d.mkdir(parents=True)
    paths = [_write(d, f"{r['run_id']}.json", r) for r in rows]
    by_files = load_rows(paths)
    by_dir = load_rows([tmp_path / "runs"])
    assert [r["run_id"] for r in by_files] == [r["run_id"] for r in rows]
    assert sorted(r["run_id"] for r in by_dir) == sorted(r["run_id"] for r in rows)
    assert by_files[0]["_source"] == str(paths[0])


@pytest.mark.parametrize(
    "mutate, needle",
    [
        (lambda r: r.pop("status"), "status"),
        (lambda r: r.update(status="crashed"), "crashed"),
        (lambda r: r.update(count="12"), "count"),
        (lambda r: r.update(count=True), "count"),
        (lambda r: r.update(fingerprint="12ab"), "fingerprint"),
        (lambda r: r.update(fingerprint="0xZZ"), "fingerprint"),
        (lambda r: r.update(algo_s=[]), "algo_s"),
        (lambda r: r.update(algo_s=["fast"]), "algo_s"),
        (lambda r: r.update(graph={"n_left": 1}), "graph"),
        (lambda r: r.pop("dataset"), "dataset"),
        (lambda r: r.update(params=[1, 2]), "params"),
        (lambda r: r.update(timed="yes"), "timed"),
    ],
)
def test_bad_row_names_the_file(tmp_path, mutate, needle):
    row = imbea("YouTube")
    mutate(row)
    p = _write(tmp_path, "bad.json", row)
    with pytest.raises(ValueError) as e:
        load_rows([p])
    assert str(p) in str(e.value)
    assert needle in str(e.value)


def test_unreadable_and_missing_files(tmp_path):
    p = _write(tmp_path, "trunc.json", '{"dataset": "A", "run_')
    with pytest.raises(ValueError, match="trunc.json"):
        load_rows([p])
    with pytest.raises(ValueError, match="nope.json"):
        load_rows([tmp_path / "nope.json"])
    p = _write(tmp_path, "list.json", "[1, 2]")
    with pytest.raises(ValueError, match="list.json"):
        load_rows([p])


def test_duplicate_dataset_run_id_rejected(tmp_path):
    a = _write(tmp_path, "a.json", imbea("A"))
    b = _write(tmp_path, "b.json", imbea("A"))
    with pytest.raises(ValueError, match="duplicate") as e:
        load_rows([a, b])
    assert "a.json" in str(e.value) and "b.json" in str(e.value)


def test_two_files_with_one_configuration_rejected(tmp_path):
    """Rows of two plans: same engine and params under another file name."""
    a = _write(tmp_path, "a.json", parmbe("A", 2))
    b = _write(tmp_path, "b.json", parmbe("A", 2, run_id="parmbe-old-name"))
    with pytest.raises(ValueError, match="same engine and parameters") as e:
        load_rows([a, b])
    assert "a.json" in str(e.value) and "b.json" in str(e.value)
    load_rows([a, _write(tmp_path, "c.json", parmbe("B", 2, run_id="parmbe-old-name"))])


def test_non_ok_rows_need_no_count():
    for status in ("timeout", "error", "skipped", "unavailable"):
        row = imbea("A", status)
        assert row["count"] is None and validate_row(row) == row
    ok = imbea("A", count=3)
    assert validate_row(ok) == ok
    with pytest.raises(ValueError, match="count"):  # an ok row does need one
        validate_row({**ok, "count": None})


def test_unavailable_rows_say_why_once_per_dataset():
    from mbebench.rows import unavailable

    rows = [imbea("A", "unavailable", message="HTTP 404\nmore"), parmbe("A", 2, "unavailable",
            message="HTTP 404"), imbea("B"), imbea("C", "error", message="boom")]
    assert unavailable(rows) == {"A": "HTTP 404 more"}
    assert status_text(rows[0]) == "unavailable"  # the cell; the reason is listed once
    row = imbea("B")
    row["env"] = "a string"
    with pytest.raises(ValueError, match="'env' must be an object"):
        validate_row(row, "r.json")


def test_ok_row_without_fingerprint_is_valid():
    """A command-line engine may report only its count."""
    row = make_row("A", "mine", label="mine", fingerprint=None)
    assert validate_row(row)["fingerprint"] is None


def test_status_text():
    assert status_text(cumbe("A", "cuMBE", "skipped", message="no CUDA device")) == (
        "skipped: no CUDA device")
    assert status_text(imbea("A", "timeout", timeout_s=600)) == "timeout (600 s)"
    assert status_text(imbea("A", "timeout", timeout_s=0.5)) == "timeout (0.5 s)"
    err = imbea("A", "error", message="ValueError: x\nsecond line")
    assert status_text(err) == "error: ValueError: x"


def test_select_and_configs_use_the_rows_fields_not_their_file_names():
    rows = [
        cumbe("A", "noWS", instr=True, run_id="x1"),
        parmbe("A", 16, run_id="x2"),
        imbea("A", run_id="x3"),
        parmbe("A", 2, run_id="x4"),
        cumbe("A", "cuMBE", run_id="x5"),
        cumbe("B", "cuMBE", run_id="x5"),
    ]
    assert [r["run_id"] for r in select(rows, engine="parmbe")] == ["x2", "x4"]
    assert [r["run_id"] for r in select(rows, params={"processes": 2})] == ["x4"]
    assert [r["run_id"] for r in select(rows, engine="cumbe", timed=False)] == ["x1"]
    assert [r["dataset"] for r in select(rows, variant="cuMBE", timed=True)] == ["A", "B"]
    # one entry per (engine, params): timed first, registered engines in registry order,
    # then by parameter value, whatever the order of the row files
    want = ["iMBEA", "ParMBE p=2", "ParMBE p=16", "cuMBE", "cuMBE noWS instr"]
    assert [c.label for c in configs(rows)] == want
    assert [c.label for c in configs(rows[::-1])] == want
    mine = [make_row("A", "mine", label=f"mine x={x}", params={"x": x}) for x in (10, 9)]
    assert [c.label for c in configs(mine + rows)][-3:] == ["mine x=9", "mine x=10",
                                                             "cuMBE noWS instr"]


def test_v1_rows_are_read_as_today(tmp_path):
    """Rows written before labels and 'timed' (schema_version 1) read as today's."""
    row = cumbe("A", "noWS", instr=True)
    for key in ("label", "timed", "entry", "command"):
        row.pop(key)
    row.update(schema_version=1, run_id="cumbe-noWS-instr")
    (got,) = load_rows([_write(tmp_path, "r.json", row)])
    assert got["label"] == "cuMBE noWS instr" and got["timed"] is False  # from the spec
    assert got["variant"] == "noWS"
    gone = make_row("A", "retired", label="x", run_id="retired-p2")
    for key in ("label", "timed"):
        gone.pop(key)
    gone["schema_version"] = 1
    (got,) = load_rows([_write(tmp_path, "g.json", gone)])
    assert (got["label"], got["timed"]) == ("retired-p2", True)


def test_rows_frame_summarises_times():
    rows = [
        imbea("A", algo_s=[3.0, 1.0, 2.0, 10.0], graph={"n_left": 4, "n_right": 5,
                                                        "n_edges": 6}),
        parmbe("A", 4, algo_s=[1.5]),
        cumbe("A", "cuMBE", "skipped", instr=True, message="no CUDA device"),
    ]
    df = rows_frame(rows)
    assert len(df) == 3
    im = df[df.engine == "imbea"].iloc[0]
    assert im.algo_median == pytest.approx(2.5)
    assert (im.algo_min, im.algo_max) == (1.0, 10.0)
    assert (im.n_left, im.n_right, im.n_edges) == (4, 5, 6)
    assert df[df.engine == "parmbe"].iloc[0]["params.processes"] == 4
    sk = df[df.engine == "cumbe"].iloc[0]
    assert not sk.timed and sk.variant == "cuMBE" and sk.label == "cuMBE instr"
    assert bool(sk["params.instrument"])
    assert sk.status_text == "skipped: no CUDA device"
    assert math.isnan(sk.algo_median)


def test_graph_meta_and_order():
    rows = [imbea("B", "timeout"),
            parmbe("B", 1, graph={"n_left": 1, "n_right": 2, "n_edges": 2}),
            imbea("Z")]
    assert graph_meta(rows)["B"] == {"n_left": 1, "n_right": 2, "n_edges": 2}
    assert ordered_datasets(rows, ["C", "B"]) == ["C", "B", "Z"]


def test_every_committed_row_fits_the_schema():
    """The benchmark folders' and the test data's rows: one schema for all of them."""
    from pathlib import Path

    from mbebench.row_schema import problem

    repo = Path(__file__).resolve().parents[1]
    rows = []
    for path in [*repo.glob("benchmarks/**/*.json"), *repo.glob("tests/data/**/*.json")]:
        try:
            obj = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(obj, dict) and {"dataset", "run_id", "engine", "status"} <= obj.keys():
            rows.append((path, obj))
    for path in repo.glob("benchmarks/**/*.jsonl"):
        for line in path.read_text().splitlines():
            obj = json.loads(line) if line.startswith("{") else None
            if isinstance(obj, dict) and {"dataset", "run_id", "engine", "status"} <= obj.keys():
                rows.append((path, obj))
    assert len(rows) > 50
    assert [(str(p), problem(r)) for p, r in rows if problem(r)] == []


def test_a_malformed_engine_result_becomes_an_error_row():
    from mbebench.row_schema import checked_or_error

    good = imbea("A", count=3)
    assert checked_or_error(good) is good
    bad = checked_or_error({**good, "count": -1})
    assert bad["status"] == "error" and "'count'" in bad["message"]
    assert validate_row(bad) == bad
