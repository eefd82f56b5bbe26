"""mbebench.report figures: the data each figure draws (read back from the artists), not pixels."""

from __future__ import annotations

import numpy as np
import pytest
from rowfactory import cumbe, imbea, parmbe

from mbebench.report import (
    breakdown,
    figure,
    scaling,
    time_vs_size,
    workload,
    write_figures,
)

DATASETS = ["Marvel", "YouTube", "Unicode", "Tiny"]
PHASE_KEYS = ["candidate_selection", "lprime_construction", "maximality_checking",
              "maximal_expansion", "subtree_fetching", "work_stealing", "other"]


def busy(seed: int, n: int, shape: float) -> list[float]:
    return list(np.random.default_rng(seed).gamma(shape, 0.01, n))


def phases(scale: float, **over) -> dict[str, float]:
    base = dict(zip(PHASE_KEYS, [3.0, 2.0, 1.5, 1.0, 0.8, 0.4, 0.3]))
    base.update(over)
    return {k: v * scale for k, v in base.items()}


def scenario() -> list[dict]:
    rows = []
    # Marvel: everything present
    rows += [
        cumbe("Marvel", "cuMBE", instr=True,
              stats={"worker_busy_s": busy(1, 64, 50), "phases_s": phases(2.0)}),
        cumbe("Marvel", "noRS", instr=True,
              stats={"phases_s": phases(2.0, maximality_checking=4)}),
        cumbe("Marvel", "noES", instr=True,
              stats={"phases_s": phases(2.0, candidate_selection=9)}),
        cumbe("Marvel", "noWS", instr=True,
              stats={"worker_busy_s": busy(2, 64, 2), "phases_s": phases(2.0, work_stealing=0,
                                                                       other=5)}),
        parmbe("Marvel", 1, algo_s=[8.0], stats={"worker_busy_s": [8.0]}),
        parmbe("Marvel", 2, algo_s=[4.4, 4.0, 4.2], stats={"worker_busy_s": [4.0, 3.0]}),
        parmbe("Marvel", 4, algo_s=[2.5], stats={"worker_busy_s": [2.0, 1.0, 3.0, 2.0]}),
        parmbe("Marvel", 8, "timeout", timeout_s=600),
    ]
    # YouTube: noWS-instr errored; no 1-process ParMBE run
    rows += [
        cumbe("YouTube", "cuMBE", instr=True,
              stats={"worker_busy_s": busy(3, 64, 40), "phases_s": phases(50.0)}),
        cumbe("YouTube", "noWS", "error", instr=True, message="CudaAPIError: out of memory"),
        parmbe("YouTube", 2, algo_s=[10.0], stats={"worker_busy_s": [5.0, 5.0]}),
        parmbe("YouTube", 4, algo_s=[6.0], stats={}),
    ]
    # Unicode: no GPU; Tiny: no rows at all
    rows += [
        cumbe("Unicode", "cuMBE", "skipped", instr=True, message="no CUDA device"),
        cumbe("Unicode", "noWS", "skipped", instr=True, message="no CUDA device"),
        parmbe("Unicode", 1, algo_s=[1.0], stats={"worker_busy_s": [1.0]}),
    ]
    return rows


def five_numbers(values) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    a = a / a.mean()
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {"min": a.min(), "q1": q1, "median": med, "q3": q3, "max": a.max()}


def assert_box(drawn: dict, values) -> None:
    want = five_numbers(values)
    for k, v in want.items():
        assert drawn[k] == pytest.approx(v, rel=1e-9), k
    assert drawn["n"] == len(values)


def assert_files(info: dict, png, pdf) -> None:
    assert info["paths"] == [png, pdf]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    assert not list(png.parent.glob(".*.tmp"))


def _by_key(rows):
    """(dataset, label) -> row: the tests' own index of the scenario."""
    return {(r["dataset"], r["label"]): r for r in rows}


# --------------------------------------------------------------------------- Fig. 6


def test_workload_plot_data(tmp_path):
    rows = scenario()
    idx = _by_key(rows)
    png, pdf = tmp_path / "w.png", tmp_path / "w.pdf"
    info = workload.plot(rows, DATASETS, png, pdf)
    assert_files(info, png, pdf)

    gpu = info["gpu"]
    assert gpu["xlabels"] == ["Marvel", "YouTube"]  # dataset order kept, no-data ones left out
    assert gpu["xticklabels"] == ["Marvel", "YouTube"]
    assert "mean" in gpu["ylabel"]
    series = gpu["series"]
    assert set(series) == {"cuMBE (work stealing)", "noWS (no work stealing)"}
    assert set(series["cuMBE (work stealing)"]) == {"Marvel", "YouTube"}
    assert set(series["noWS (no work stealing)"]) == {"Marvel"}
    assert_box(series["cuMBE (work stealing)"]["Marvel"],
               idx["Marvel", "cuMBE instr"]["stats"]["worker_busy_s"])
    assert_box(series["noWS (no work stealing)"]["Marvel"],
               idx["Marvel", "cuMBE noWS instr"]["stats"]["worker_busy_s"])
    assert_box(series["cuMBE (work stealing)"]["YouTube"],
               idx["YouTube", "cuMBE instr"]["stats"]["worker_busy_s"])
    assert "skipped" in info["left_out"]["gpu"]["Unicode"]
    assert "Tiny" in info["left_out"]["gpu"]
    assert "error" in info["texts"]  # YouTube's missing noWS box says why
    assert any("YouTube" in n for n in info["notes"])

    par = info["parmbe"]
    # largest process count with per-worker data: Marvel p4 (p8 timed out), YouTube p2
    # (p4 has no busy times), Unicode p1
    assert par["xlabels"] == ["Marvel", "YouTube", "Unicode"]
    assert par["processes"] == {"Marvel": 4, "YouTube": 2, "Unicode": 1}
    assert par["xticklabels"] == ["Marvel (p=4)", "YouTube (p=2)", "Unicode (p=1)"]
    # four processes: four dots (over their mean, 2.0), not the quartiles of four values
    marvel = par["series"]["ParMBE"]["Marvel"]
    assert (marvel["kind"], marvel["n"]) == ("points", 4)
    assert sorted(marvel["values"]) == pytest.approx([0.5, 1.0, 1.0, 1.5])
    assert par["series"]["ParMBE"]["YouTube"]["max"] == pytest.approx(1.0)
    assert "Tiny" in info["left_out"]["parmbe"]


def test_workload_plot_without_gpu(tmp_path):
    rows = [r for r in scenario() if r["dataset"] == "Unicode"]
    info = workload.plot(rows, DATASETS, tmp_path / "w.png", tmp_path / "w.pdf")
    assert info["gpu"]["series"] == {} and info["gpu"]["xlabels"] == []
    # the empty GPU panel says why it is empty
    assert any("no instrumented GPU runs" in t and "no CUDA device" in t for t in info["texts"])
    assert info["parmbe"]["xlabels"] == ["Unicode"]


def test_workload_plot_nothing_at_all(tmp_path):
    info = workload.plot([], ["A"], tmp_path / "w.png", tmp_path / "w.pdf")
    assert "cuMBE not run (not enabled in the config)" in info["texts"]
    assert figure.NO_GPU_TEXT not in info["texts"]
    assert workload.NO_PARMBE_TEXT in info["texts"]
    assert (tmp_path / "w.png").stat().st_size > 0


@pytest.mark.parametrize("rows, text", [
    ([], "cuMBE not run (not enabled in the config)"),
    ([parmbe("A", 1)], "cuMBE not run (not enabled in the config)"),
    ([cumbe("A", "cuMBE")], "no instrumented cuMBE runs (instrument: false in the config)"),
    ([cumbe("A", "cuMBE", "skipped", instr=True, message="no CUDA device")], figure.NO_GPU_TEXT),
])
def test_the_empty_gpu_panel_says_why_and_blames_no_device_only_when_it_is_so(
        tmp_path, rows, text):
    for func in (workload.plot, breakdown.plot):
        info = func(rows, ["A"], tmp_path / "x.png", tmp_path / "x.pdf")
        assert text in info["texts"], (func.__name__, info["texts"])


def test_simulator_times_are_labelled_as_such(tmp_path):
    rows = [cumbe("A", v, instr=True, stats={"worker_busy_s": busy(1, 8, 5),
                                             "phases_s": phases(1.0)}) for v in ("cuMBE", "noWS")]
    info = breakdown.plot(rows, ["A"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert not info["simulated"] and figure.SIMULATOR_TEXT not in info["title"]
    assert info["group_labels"][0] == (f"A\nTable I: not run\ninstrumented build:\n"
                                       f"{sum(phases(1.0).values()) / 8:.2f} s per worker")
    for r in rows:
        r["simulated"] = True
    info = breakdown.plot(rows, ["A"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert info["simulated"] and figure.SIMULATOR_TEXT in info["title"]
    assert info["group_labels"][0].endswith("s per worker simulated")
    w = workload.plot(rows, ["A"], tmp_path / "w.png", tmp_path / "w.pdf")
    assert w["gpu"]["simulated"] and figure.SIMULATOR_TEXT in w["gpu"]["title"]


def test_every_figure_lists_the_unavailable_datasets(tmp_path):
    why = "dataset 'Gone': download of file:///m/x.tar.bz2 failed after 1 attempt(s): no such file"
    rows = scenario() + [parmbe("Gone", 1, "unavailable", message=why)]
    paths = write_figures(rows, DATASETS + ["Gone"], tmp_path, unavailable={"Late": "HTTP 503"})
    assert len(paths) == 8
    for func in (workload.plot, breakdown.plot, scaling.plot, time_vs_size.plot):
        info = func(rows, DATASETS + ["Gone"], tmp_path / "x.png", tmp_path / "x.pdf",
                    {"Gone": why, "Late": "HTTP 503"})
        assert info["footer"].splitlines() == [  # no machine path: the file name is enough
            "Unavailable (download or convert failed, not run):",
            "  Gone: dataset 'Gone': download of x.tar.bz2 failed after 1 attempt(s): no such "
            "file", "  Late: HTTP 503"], func.__module__
    # nothing unavailable: no footer
    info = scaling.plot(scenario(), DATASETS, tmp_path / "x.png", tmp_path / "x.pdf")
    assert "footer" not in info


# --------------------------------------------------------------------------- Fig. 7


def test_breakdown_plot_data(tmp_path):
    rows = scenario()
    png, pdf = tmp_path / "b.png", tmp_path / "b.pdf"
    info = breakdown.plot(rows, DATASETS, png, pdf)
    assert_files(info, png, pdf)
    assert info["datasets"] == ["Marvel", "YouTube"]
    assert info["phases"] == ["candidate selection", "L′ construction", "maximality checking",
                              "maximal expansion", "subtree fetching", "work stealing",
                              "other (launch, idle)"]
    assert info["legend"] == info["phases"][::-1]  # stacked order, top first
    assert info["ylabel"] == "time / cuMBE's time on the dataset"

    vals = info["values"]
    total = sum(phases(2.0).values())
    for variant, over in (("cuMBE", {}), ("noRS", {"maximality_checking": 4}),
                          ("noES", {"candidate_selection": 9}),
                          ("noWS", {"work_stealing": 0, "other": 5})):
        want = phases(2.0, **over)
        for key, label in zip(PHASE_KEYS, info["phases"]):
            assert vals["Marvel"][variant][label] == pytest.approx(want[key] / total), (
                variant, label)
    assert sum(vals["Marvel"]["cuMBE"].values()) == pytest.approx(1.0)
    assert sum(vals["YouTube"]["cuMBE"].values()) == pytest.approx(1.0)
    assert info["totals_s"]["YouTube"]["cuMBE"] == pytest.approx(sum(phases(50.0).values()))
    # YouTube: only cuMBE drawn; the other slots say why
    assert set(vals["YouTube"]) == {"cuMBE"}
    assert info["absent"]["YouTube/noWS"] == "error"
    assert info["absent"]["YouTube/noRS"] == "not run"
    assert info["xticklabels"] == ["cuMBE", "noRS", "noES", "noWS"] * 2
    assert any(t.startswith("Marvel\n") for t in info["texts"])
    assert "Unicode/cuMBE" in info["left_out"]


def test_breakdown_unknown_phase_goes_to_other(tmp_path):
    rows = [cumbe("A", "cuMBE", instr=True,
                  stats={"phases_s": {"candidate_selection": 1.0, "mystery": 3.0}})]
    info = breakdown.plot(rows, ["A"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert info["values"]["A"]["cuMBE"]["other (launch, idle)"] == pytest.approx(0.75)
    assert any("mystery" in n for n in info["notes"])


def test_breakdown_without_gpu(tmp_path):
    rows = [r for r in scenario() if r["dataset"] == "Unicode"]
    info = breakdown.plot(rows, DATASETS, tmp_path / "b.png", tmp_path / "b.pdf")
    assert info["datasets"] == []
    assert figure.NO_GPU_TEXT in info["texts"]
    # instrumented runs that failed for another reason are not blamed on a missing GPU
    err = [cumbe("A", "cuMBE", "error", instr=True, message="boom")]
    info = breakdown.plot(err, ["A"], tmp_path / "c.png", tmp_path / "c.pdf")
    assert figure.NO_GPU_TEXT not in info["texts"]
    assert any("error" in t for t in info["texts"])


# --------------------------------------------------------------------------- scaling


def test_scaling_plot_data(tmp_path):
    rows = scenario()
    png, pdf = tmp_path / "s.png", tmp_path / "s.pdf"
    info = scaling.plot(rows, DATASETS, png, pdf)
    assert_files(info, png, pdf)
    s = info["series"]
    assert list(s) == ["Marvel", "YouTube", "Unicode"]
    assert s["Marvel"]["base"] == 1
    assert s["Marvel"]["processes"] == [1, 2, 4]  # p8 timed out
    assert s["Marvel"]["speedup"] == pytest.approx([1.0, 8.0 / 4.2, 8.0 / 2.5])
    # no 1-process run: speedup over the smallest count
    assert s["YouTube"]["base"] == 2
    assert s["YouTube"]["processes"] == [2, 4]
    assert s["YouTube"]["speedup"] == pytest.approx([1.0, 10.0 / 6.0])
    assert s["Unicode"]["speedup"] == [1.0]
    assert info["ideal"][1]["processes"] == [1, 2, 4, 8]
    assert info["ideal"][1]["speedup"] == [1, 2, 4, 8]
    assert info["ideal"][2]["speedup"] == [1, 2, 4]
    assert "YouTube (base p=2)" in info["legend"] and "Marvel" in info["legend"]
    assert info["xlabel"] == "ParMBE processes"
    assert "smallest" in info["ylabel"]
    assert info["xscale"] == "log"  # 1..8 spans a decade-ish: log2 axes
    assert info["xticks"] == [1, 2, 4, 8]
    assert any("timeout" in n for n in info["notes"])
    assert "Tiny" in info["left_out"]


def test_scaling_plot_nothing(tmp_path):
    info = scaling.plot([imbea("A")], ["A"], tmp_path / "s.png",
                              tmp_path / "s.pdf")
    assert info["series"] == {}
    assert scaling.NO_SCALING_TEXT in info["texts"]


# --------------------------------------------------------------------------- CLI hook


def test_write_all(tmp_path):
    paths = write_figures(scenario(), DATASETS, tmp_path / "plots")
    assert [p.name for p in paths] == ["workload.png", "workload.pdf", "breakdown.png",
                                       "breakdown.pdf", "scaling.png", "scaling.pdf",
                                       "time_vs_size.png", "time_vs_size.pdf"]
    assert all(p.is_file() and p.stat().st_size > 1000 for p in paths)


def test_figures_read_the_rows_fields_not_their_file_names_or_order(tmp_path):
    rows = scenario()
    renamed = [{**r, "run_id": f"run{i}"} for i, r in enumerate(rows)][::-1]
    for func in (workload.plot, breakdown.plot, scaling.plot, time_vs_size.plot):
        a = func(rows, DATASETS, tmp_path / "a.png", tmp_path / "a.pdf")
        b = func(renamed, DATASETS, tmp_path / "b.png", tmp_path / "b.pdf")
        a.pop("paths"), b.pop("paths")
        assert repr(a) == repr(b), func.__name__


def test_a_k_sweep_of_instrumented_runs_draws_its_first_configuration(tmp_path):
    rows = [cumbe("A", "cuMBE", instr=True, k=k, stats={"phases_s": phases(float(k))})
            for k in (8, 2)]
    info = breakdown.plot(rows, ["A"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert info["totals_s"]["A"]["cuMBE"] == pytest.approx(sum(phases(2.0).values()))
