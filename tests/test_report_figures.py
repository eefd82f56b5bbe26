"""Issue 19's figure defects, each reproduced on rendered metadata (titles, labels,
scales, texts, files), never on pixels: on rows like the device result set's and on
that set itself (benchmarks/device-pipeline/result)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rowfactory import cumbe, imbea, parmbe

from mbebench import dataset_status, rows
from mbebench.report import breakdown, scaling, time_vs_size, workload, write_figures
from mbebench.report.select import without_paths

RESULT = Path(__file__).parents[1] / "benchmarks" / "device-pipeline" / "result"
PHASES = {"candidate_selection": 2.8, "lprime_construction": 2.1, "maximality_checking": 11.3,
          "maximal_expansion": 6.3, "subtree_fetching": 0.3, "work_stealing": 67.3,
          "other": 79.6}  # Marvel's, summed over 4,224 warps: 170 warp-seconds
N_WARPS = 4224
MARVEL = {"n_left": 6486, "n_right": 12942, "n_edges": 96662}


def marvel_rows() -> list[dict]:
    """cuMBE on Marvel as the device run wrote it: per-warp stats, a 0.040 s kernel."""
    rng = np.random.default_rng(0)
    total = sum(PHASES.values())
    per_warp = total / N_WARPS
    even = list(per_warp * rng.uniform(0.99, 1.01, N_WARPS))
    skewed = list(np.r_[rng.uniform(0.001, 0.01, N_WARPS - 4), [75.0, 40.0, 20.0, 10.0]])
    stats = {"worker": "warp", "blocks": 1056, "warps_per_block": 4, "side": "left"}
    return [
        cumbe("Marvel", "cuMBE", algo_s=[0.0402], graph=MARVEL, stats={**stats}),
        cumbe("Marvel", "noWS", algo_s=[0.166], graph=MARVEL, stats={**stats}),
        cumbe("Marvel", "cuMBE", instr=True, algo_s=[per_warp], graph=MARVEL,
              stats={**stats, "worker_busy_s": even, "phases_s": PHASES}),
        cumbe("Marvel", "noWS", instr=True, algo_s=[0.166], graph=MARVEL,
              stats={**stats, "worker_busy_s": skewed,
                     "phases_s": {**PHASES, "other": 79.6 * 8}}),
        parmbe("Marvel", 1, algo_s=[0.7], graph=MARVEL, stats={"worker_busy_s": [0.7]}),
        parmbe("Marvel", 16, algo_s=[0.06], graph=MARVEL,
               stats={"worker_busy_s": list(rng.uniform(0.05, 0.06, 16))}),
        imbea("Marvel", algo_s=[0.6], graph=MARVEL),
    ]


def test_the_gpu_workers_are_called_warps_not_thread_blocks(tmp_path):
    info = workload.plot(marvel_rows(), ["Marvel"], tmp_path / "w.png", tmp_path / "w.pdf")
    title = info["gpu"]["title"]
    assert "per warp (4,224 warps per run" in title and "thread block" not in title
    b = breakdown.plot(marvel_rows(), ["Marvel"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert "per warp" in b["title"] and "thread block" not in b["title"] + b["ylabel"]


def test_the_breakdown_states_the_seconds_table_i_states(tmp_path):
    """Before: "Marvel (cuMBE = 170 s)", the phases summed over 4,224 warps, beside Table
    I's 0.040 s.  Now: seconds per warp, and the timed run's (Table I's) seconds."""
    info = breakdown.plot(marvel_rows(), ["Marvel"], tmp_path / "b.png", tmp_path / "b.pdf")
    per_warp = sum(PHASES.values()) / N_WARPS
    assert info["per_worker_s"]["Marvel"] == pytest.approx(per_warp)
    assert info["group_labels"] == [
        f"Marvel\nTable I: 0.040 s\ninstrumented build:\n{per_warp:.3f} s per warp"]
    assert "170" not in "".join(info["texts"])


def test_an_outlier_bar_is_cut_and_labelled_so_the_others_stay_readable(tmp_path):
    info = breakdown.plot(marvel_rows(), ["Marvel"], tmp_path / "b.png", tmp_path / "b.pdf")
    ratio = sum({**PHASES, "other": 79.6 * 8}.values()) / sum(PHASES.values())
    assert info["clipped_bars"] == {"Marvel/noWS": pytest.approx(ratio)}
    assert f"{ratio:.1f}×" in info["texts"]
    assert info["axes"][0]["ylim"][1] == pytest.approx(1.3)
    assert sum(info["values"]["Marvel"]["noWS"].values()) == pytest.approx(ratio)  # true height


def test_the_breakdown_axis_starts_at_a_labelled_zero(tmp_path):
    info = breakdown.plot(marvel_rows(), ["Marvel"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert info["axes"][0]["ylim"][0] == 0 and 0.0 in info["yticks"]


def test_workload_uses_a_log_axis_when_the_values_span_decades(tmp_path):
    """Before: a linear axis to 75 hid the cuMBE boxes (all near 1) under noWS whiskers."""
    info = workload.plot(marvel_rows(), ["Marvel"], tmp_path / "w.png", tmp_path / "w.pdf")
    assert info["gpu"]["yscale"] == "log" and info["axes"][0]["yscale"] == "log"
    lo, hi = info["axes"][0]["ylim"]
    nows = info["gpu"]["series"]["noWS (no work stealing)"]["Marvel"]
    assert lo < nows["min"] and hi > nows["max"]  # every whisker inside the axes
    # ParMBE's processes, all near the mean: linear from 0
    assert info["parmbe"]["yscale"] == "linear" and info["axes"][1]["ylim"][0] == 0


def test_no_text_is_cut_off_and_no_machine_path_is_shown(tmp_path):
    why = ("dataset 'Gone': download of file:///work/main/.mirror/download.tsv.x.tar.bz2 "
           "failed after 1 attempt: no such file /work/main/.mirror/download.tsv.x.tar.bz2")
    unav = {"Gone": why}
    for module in (workload, breakdown, scaling, time_vs_size):
        info = module.plot(marvel_rows(), ["Marvel", "Gone"], tmp_path / "x.png",
                           tmp_path / "x.pdf", unav)
        assert info["clipped"] == [], (module.__name__, info["clipped"])
        shown = "\n".join(info["figure_texts"] + info["texts"])
        assert "/work" not in shown and "file://" not in shown, module.__name__
        assert "download.tsv.x.tar.bz2" in shown  # the file is still named


def test_paths_are_cut_to_file_names_but_web_addresses_stay():
    assert without_paths("download of file:///a/b/c.tar.bz2 failed: /a/b/c.tar.bz2") == \
        "download of c.tar.bz2 failed: c.tar.bz2"
    assert without_paths("HTTP 404 for http://konect.cc/files/x.tar.bz2 (3 / 4)") == \
        "HTTP 404 for http://konect.cc/files/x.tar.bz2 (3 / 4)"


def test_every_png_has_a_vector_pdf_beside_it(tmp_path):
    paths = write_figures(marvel_rows(), ["Marvel"], tmp_path)
    pngs = [p for p in paths if p.suffix == ".png"]
    assert {p.stem for p in pngs} == {"workload", "breakdown", "scaling", "time_vs_size"}
    for png in pngs:
        pdf = png.with_suffix(".pdf")
        assert pdf in paths and pdf.read_bytes()[:5] == b"%PDF-"
        assert b"/Subtype /Image" not in pdf.read_bytes()  # drawn, not a bitmap


def test_time_vs_size_is_log_log_with_markers_per_configuration_and_no_lines(tmp_path):
    """Issue 33: a line through unrelated datasets suggests a trend that is not there."""
    rs = marvel_rows()
    small = {"n_left": 10, "n_right": 20, "n_edges": 30}
    rs += [imbea("Small", algo_s=[0.001], graph=small, count=3),
           cumbe("Small", "cuMBE", algo_s=[0.002], graph=small, count=3)]
    sim = cumbe("Small", "noWS", algo_s=[5.0], graph=small, count=3)
    sim["simulated"] = True
    rs.append(sim)
    info = time_vs_size.plot(rs, ["Marvel", "Small"], tmp_path / "t.png", tmp_path / "t.pdf")
    assert [(a["xscale"], a["yscale"]) for a in info["axes"]] == [("log", "log")] * 2
    assert [a["xlabel"] for a in info["axes"]] == ["edges |E|", "maximal bicliques"]
    assert info["axes"][0]["ylabel"] == "median algorithm time (s)"
    assert set(info["series"]) == {"iMBEA", "ParMBE p=1", "ParMBE p=16", "cuMBE", "cuMBE noWS"}
    assert info["series"]["iMBEA"]["edges |E|"] == {
        "x": [30.0, 96662.0], "y": [0.001, 0.6], "datasets": ["Small", "Marvel"],
        "fill": ["full", "full"]}
    assert info["lines"] == 0
    assert info["series"]["cuMBE"]["maximal bicliques"]["x"] == [3.0, 10.0]
    assert info["series"]["cuMBE noWS"]["edges |E|"]["datasets"] == ["Marvel"]
    assert info["left_out"] == ["Small/cuMBE noWS: simulated"]


@pytest.mark.skipif(not (RESULT / "runs").is_dir(), reason="no device result set")
def test_the_device_result_set_renders_with_nothing_cut_off(tmp_path):
    loaded = rows.load_rows(RESULT / "runs")
    metas = sorted((RESULT / "csr").glob("*.json")) if (RESULT / "csr").is_dir() else []
    unav = {**dataset_status.unavailable_datasets(metas), **rows.unavailable(loaded)}
    order = list(dict.fromkeys(r["dataset"] for r in loaded))
    for module in (workload, breakdown, scaling, time_vs_size):
        info = module.plot(loaded, order, tmp_path / "x.png", tmp_path / "x.pdf", unav)
        assert info["clipped"] == [], (module.__name__, info["clipped"])
        assert "file://" not in info.get("footer", ""), module.__name__
    b = breakdown.plot(loaded, order, tmp_path / "b.png", tmp_path / "b.pdf", unav)
    for ds, per_warp in b["per_worker_s"].items():  # the instrumented kernel's own seconds
        instr = rows.select(loaded, dataset=ds, engine="cumbe", variant="cuMBE", timed=False)
        assert per_warp == pytest.approx(instr[0]["stats"]["kernel_s"], rel=1e-6), ds


def test_the_cut_off_check_sees_a_cut_label():
    """The check the tests above rely on fails on the old breakdown's defect: a y label
    longer than the axes is cut at the canvas edge."""
    from mbebench.report import figure

    fig = figure.new(4.0, 2.0)
    ax = fig.subplots()
    ax.set_ylabel("time / cuMBE total (phases summed over thread blocks)")
    assert figure.clipped(fig) == ["time / cuMBE total (phases summed over thread blocks)"]
    ax.set_ylabel("time")
    assert figure.clipped(fig) == []


def test_scaling_uses_a_log_axis_when_speedups_span_a_decade(tmp_path):
    """The tiny graphs: 2 processes give 0.2x on one graph and 9x on another."""
    rs = [parmbe("A", 1, algo_s=[1.0]), parmbe("A", 2, algo_s=[5.0]),
          parmbe("B", 1, algo_s=[9.0]), parmbe("B", 2, algo_s=[1.0])]
    info = scaling.plot(rs, ["A", "B"], tmp_path / "s.png", tmp_path / "s.pdf")
    assert (info["xscale"], info["yscale"]) == ("linear", "log")
    assert info["axes"][0]["yscale"] == "log"
    rs[1]["algo_s"] = [0.6]
    rs[3]["algo_s"] = [5.0]
    info = scaling.plot(rs, ["A", "B"], tmp_path / "s.png", tmp_path / "s.pdf")
    assert (info["xscale"], info["yscale"]) == ("linear", "linear")


def test_the_breakdown_sets_our_check_in_rounds_beside_cumbe(tmp_path):
    """Rows of cuMBE with the check in rounds get a bar of their own next to cuMBE's,
    ticked "+rounds"; cuMBE's bar stays the paper's check, whichever row comes first."""
    stats = {"worker": "warp", "blocks": 1056, "warps_per_block": 4, "side": "left"}
    half = {k: v / 2 for k, v in PHASES.items()}
    rounds = [cumbe("Marvel", "cuMBE", rounds=True, algo_s=[0.03], graph=MARVEL,
                    stats={**stats}),
              cumbe("Marvel", "cuMBE", instr=True, rounds=True, algo_s=[0.03], graph=MARVEL,
                    stats={**stats, "phases_s": half})]
    info = breakdown.plot(rounds + marvel_rows(), ["Marvel"], tmp_path / "b.png",
                          tmp_path / "b.pdf")
    assert info["variants"] == ["cuMBE", "cuMBE rounds", "noWS"]
    totals = info["totals_s"]["Marvel"]
    assert totals["cuMBE"] == pytest.approx(sum(PHASES.values()))
    assert totals["cuMBE rounds"] == pytest.approx(sum(PHASES.values()) / 2)
    assert "ours added (cuMBE rounds)" in info["title"]
    # without such rows the figure is the paper's
    plain = breakdown.plot(marvel_rows(), ["Marvel"], tmp_path / "p.png", tmp_path / "p.pdf")
    assert plain["variants"] == ["cuMBE", "noWS"] and "ours" not in plain["title"]
