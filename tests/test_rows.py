"""mbebench.rows: loading, validating and flattening result rows."""

from __future__ import annotations

import json
import math

import pytest

from mbebench.rows import (
    cumbe_variant,
    graph_meta,
    is_instrumented,
    load_rows,
    make_row,
    ordered_datasets,
    parmbe_processes,
    rows_frame,
    run_id_sort_key,
    status_text,
    validate_row,
)


def _write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return p


def test_load_rows_round_trip_and_directory(tmp_path):
    rows = [
        make_row("Marvel", "imbea", algo_s=[1.0, 2.0, 3.0]),
        make_row("Marvel", "cumbe-cuMBE", "skipped", message="no CUDA device"),
        make_row("Marvel", "parmbe-p2", "timeout", timeout_s=600),
        make_row("Marvel", "cumbe-noWS-instr", "error", message="boom"),
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
    ],
)
def test_bad_row_names_the_file(tmp_path, mutate, needle):
    row = make_row("YouTube", "imbea")
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
    a = _write(tmp_path, "a.json", make_row("A", "imbea"))
    b = _write(tmp_path, "b.json", make_row("A", "imbea"))
    with pytest.raises(ValueError, match="duplicate") as e:
        load_rows([a, b])
    assert "a.json" in str(e.value) and "b.json" in str(e.value)


def test_non_ok_rows_need_no_count():
    for status in ("timeout", "error", "skipped"):
        validate_row(make_row("A", "imbea", status))


def test_status_text():
    assert status_text(make_row("A", "cumbe-cuMBE", "skipped", message="no CUDA device")) == (
        "skipped: no CUDA device")
    assert status_text(make_row("A", "imbea", "timeout", timeout_s=600)) == "timeout (600 s)"
    assert status_text(make_row("A", "imbea", "timeout", timeout_s=0.5)) == "timeout (0.5 s)"
    err = make_row("A", "imbea", "error", message="ValueError: x\nsecond line")
    assert status_text(err) == "error: ValueError: x"


def test_run_id_helpers():
    assert parmbe_processes("parmbe-p16") == 16
    assert parmbe_processes("imbea") is None
    assert cumbe_variant("cumbe-noWS-instr") == "noWS"
    assert cumbe_variant("cumbe-cuMBE") == "cuMBE"
    assert is_instrumented("cumbe-noES-instr") and not is_instrumented("cumbe-noES")
    ids = ["cumbe-noWS-instr", "cumbe-noWS", "parmbe-p16", "cumbe-cuMBE", "parmbe-p2", "imbea"]
    assert sorted(ids, key=run_id_sort_key) == [
        "imbea", "parmbe-p2", "parmbe-p16", "cumbe-cuMBE", "cumbe-noWS", "cumbe-noWS-instr"]


def test_rows_frame_summarises_times():
    rows = [
        make_row("A", "imbea", algo_s=[3.0, 1.0, 2.0, 10.0], graph={"n_left": 4, "n_right": 5,
                                                                    "n_edges": 6}),
        make_row("A", "parmbe-p4", algo_s=[1.5]),
        make_row("A", "cumbe-cuMBE-instr", "skipped", message="no CUDA device"),
    ]
    df = rows_frame(rows)
    assert len(df) == 3
    imbea = df[df.run_id == "imbea"].iloc[0]
    assert imbea.algo_median == pytest.approx(2.5)
    assert (imbea.algo_min, imbea.algo_max) == (1.0, 10.0)
    assert (imbea.n_left, imbea.n_right, imbea.n_edges) == (4, 5, 6)
    assert df[df.run_id == "parmbe-p4"].iloc[0].processes == 4
    sk = df[df.run_id == "cumbe-cuMBE-instr"].iloc[0]
    assert bool(sk.instrumented) and sk.variant == "cuMBE"
    assert sk.status_text == "skipped: no CUDA device"
    assert math.isnan(sk.algo_median)


def test_graph_meta_and_order():
    rows = [make_row("B", "imbea", "timeout"),
            make_row("B", "parmbe-p1", graph={"n_left": 1, "n_right": 2, "n_edges": 2}),
            make_row("Z", "imbea")]
    assert graph_meta(rows)["B"] == {"n_left": 1, "n_right": 2, "n_edges": 2}
    assert ordered_datasets(rows, ["C", "B"]) == ["C", "B", "Z"]
