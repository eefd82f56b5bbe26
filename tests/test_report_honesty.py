"""Issue 33: what the tables, figures and report tell a reader.

A sharded run's time (the slowest shard's) and a run on several GPUs are marked wherever a
time is shown; a mismatch says what disagreed; a configuration skipped everywhere is a line,
not a column; the figures draw no trend that is not there and no box of two values; the
report holds every table its captions name.
"""

from __future__ import annotations

import re
import subprocess

import pandas as pd
import pytest
from mdtable import row as md_row
from mdtable import tables as md_tables
from rowfactory import cumbe, imbea, parmbe
from test_report_figures import MARVEL, PHASES, marvel_rows

from mbebench.report import (
    TABLE_FILES,
    breakdown,
    speedup,
    summary,
    time_vs_size,
    workload,
    write_tables,
)
from mbebench.report.select import MULTI_GPU_MARK, SHARDED_MARK

FP_A = "0x00000000000000aa"
FP_B = "0x00000000000000bb"


def sharded(row: dict, n: int = 4) -> dict:
    """The row as mbebench.gather writes it for a run split into n shards."""
    row["shards"] = {"n": n, "time_sum_s": sum(row["algo_s"]) * n}
    return row


def on_gpus(row: dict, n: int = 2) -> dict:
    """The row as cumbe.devices writes it for one run on n GPUs."""
    row["stats"] = {**row["stats"], "device_count": n}
    return row


def two_marvels() -> list[dict]:
    """Marvel whole, and Marvel again in 4 shards (the issue's case); cuMBE on 2 GPUs."""
    g = {"n_left": 6486, "n_right": 12942, "n_edges": 96662}
    whole = [imbea("Marvel", algo_s=[1.03], graph=g), parmbe("Marvel", 1, algo_s=[1.03], graph=g),
             on_gpus(cumbe("Marvel", algo_s=[0.02], graph=g))]
    parts = [sharded(imbea("Marvel-4", algo_s=[0.4], graph=g)),
             sharded(parmbe("Marvel-4", 1, algo_s=[0.336], graph=g)),
             cumbe("Marvel-4", algo_s=[0.05], graph=g)]
    return whole + parts


# --------------------------------------------------------------------------- item 1: marks


def test_table_one_marks_sharded_and_multi_gpu_times_in_every_format(tmp_path):
    write_tables(two_marvels(), ["Marvel", "Marvel-4"], tmp_path)
    md = (tmp_path / "speedup.md").read_text()
    head = md_tables(md)[0][0]
    whole, parts = md_row(md, "Marvel"), md_row(md, "Marvel-4")
    assert whole[head.index("ParMBE p=1 (s)")] == "1.03"  # an ordinary time: no mark
    assert parts[head.index("ParMBE p=1 (s)")] == f"0.336 {SHARDED_MARK}"
    assert whole[head.index("cuMBE (s)")] == f"0.020 {MULTI_GPU_MARK}"
    assert parts[head.index("cuMBE (s)")] == "0.050"
    # a speedup is as marked as the times it divides, and so is their geometric mean
    assert parts[head.index("cuMBE vs ParMBE p=1")] == f"6.72× {SHARDED_MARK}"
    assert whole[head.index("cuMBE vs ParMBE p=1")] == f"51.50× {MULTI_GPU_MARK}"
    assert md_row(md, "*geometric mean*")[head.index("cuMBE vs iMBEA")].endswith(
        f" {SHARDED_MARK}{MULTI_GPU_MARK}")
    # the footnotes say what each mark means and which times carry it, under the table
    after = md.split(md_tables(md)[0][-1][0], 1)[1]
    assert f"{SHARDED_MARK} sharded: the slowest of N shards' times" in after
    assert "Marvel-4 (4 shards)" in after
    assert f"{MULTI_GPU_MARK} one run on N GPUs" in after and "cuMBE on Marvel (2 GPUs)" in after

    tex = (tmp_path / "speedup.tex").read_text()
    line = next(ln for ln in tex.splitlines() if ln.startswith("Marvel-4 &"))
    assert r"0.336 \dag{}" in line and r"0.050 \dag" not in line
    assert r"0.020 \ddag{}" in next(ln for ln in tex.splitlines() if ln.startswith("Marvel &"))
    assert r"\multicolumn{11}{l}{\dag{} sharded: the slowest of N shards' times" in tex
    assert r"\ddag{} one run on N GPUs" in tex

    csv = pd.read_csv(tmp_path / "speedup.csv").set_index("dataset")
    assert csv.loc["Marvel-4", "ParMBE p=1 shards"] == 4
    assert csv.loc["Marvel", "ParMBE p=1 shards"] == 1
    assert csv.loc["Marvel", "cuMBE GPUs"] == 2 and "iMBEA GPUs" not in csv.columns
    assert csv.loc["Marvel-4", "ParMBE p=1 [s]"] == 0.336  # the number stays a number


def test_an_unsharded_single_gpu_table_has_no_marks_and_no_new_time_columns(tmp_path):
    write_tables(marvel_rows(), ["Marvel"], tmp_path)
    for name in ("speedup.md", "speedup.tex", "summary.md", "vs_paper.md"):
        text = (tmp_path / name).read_text()
        assert SHARDED_MARK not in text and MULTI_GPU_MARK not in text, name
        assert r"\dag" not in text, name
    cols = pd.read_csv(tmp_path / "speedup.csv").columns
    assert not [c for c in cols if c.endswith((" shards", " GPUs"))]


def test_the_summary_marks_the_times_too(tmp_path):
    write_tables(two_marvels(), ["Marvel", "Marvel-4"], tmp_path)
    md = (tmp_path / "summary.md").read_text()
    head = md_tables(md)[0][0]
    assert md_row(md, "Marvel-4")[head.index("iMBEA (s)")] == f"0.400 {SHARDED_MARK}"
    assert md_row(md, "Marvel")[head.index("cuMBE (s)")] == f"0.020 {MULTI_GPU_MARK}"
    assert "cuMBE on Marvel (2 GPUs)" in md


def test_beside_the_paper_marks_sharded_and_multi_gpu_times(tmp_path):
    rs = [r for r in marvel_rows() if r["timed"]]
    for r in rs:
        if r["engine"] == "parmbe":
            sharded(r)
    on_gpus(next(r for r in rs if r["label"] == "cuMBE"))
    write_tables(rs, ["Marvel"], tmp_path)
    md = (tmp_path / "vs_paper.md").read_text()
    head = md_tables(md)[0][0]
    m = md_row(md, "Marvel")
    assert m[head.index("cuMBE s")] == f"0.040 {MULTI_GPU_MARK}"
    assert m[head.index("ParMBE s")] == f"0.060 {SHARDED_MARK}"
    assert m[head.index("speedup")] == f"1.49× {SHARDED_MARK}{MULTI_GPU_MARK}"
    pub = md_tables(md)[1]
    ours = {r[0]: r[2] for r in pub[1:]}
    assert ours["cuMBE vs ParMBE, geometric mean"].endswith(f" {SHARDED_MARK}{MULTI_GPU_MARK}")
    assert ours["work stealing (noWS / cuMBE), Marvel"].endswith(f" {MULTI_GPU_MARK}")
    assert "Marvel (4 shards)" in md and "cuMBE on Marvel (2 GPUs)" in md
    csv = pd.read_csv(tmp_path / "vs_paper_speedups.csv").set_index("figure")
    assert csv.loc["cuMBE vs ParMBE, geometric mean", "marked"] == \
        f"Marvel {SHARDED_MARK}{MULTI_GPU_MARK}"
    sizes = pd.read_csv(tmp_path / "vs_paper.csv").set_index("dataset")
    assert (sizes.loc["Marvel", "cuMBE marks"], sizes.loc["Marvel", "ParMBE marks"]) == (
        MULTI_GPU_MARK, SHARDED_MARK)


def test_time_vs_size_draws_no_lines_and_a_sharded_point_hollow(tmp_path):
    """Before: one line per configuration through unrelated datasets, and the sharded and
    unsharded Marvel (the same |E|) joined by a vertical segment."""
    info = time_vs_size.plot(two_marvels(), ["Marvel", "Marvel-4"], tmp_path / "t.png",
                             tmp_path / "t.pdf")
    assert info["lines"] == 0
    par = info["series"]["ParMBE p=1"]["edges |E|"]
    assert dict(zip(par["datasets"], par["fill"])) == {"Marvel": "full", "Marvel-4": "none"}
    cu = info["series"]["cuMBE"]["edges |E|"]
    assert dict(zip(cu["datasets"], cu["fill"])) == {"Marvel": "left", "Marvel-4": "full"}
    legend = info["axes"][1]["legend"]
    assert "hollow: sharded, the slowest shard's time" in legend
    assert "half-filled: one run on several GPUs" in legend
    assert legend[:3] == ["iMBEA", "ParMBE p=1", "cuMBE"]


def test_time_vs_size_tick_labels_never_run_together(tmp_path):
    """Before: #MB within one decade labelled every minor tick (3×10⁴4×10⁴)."""
    rs = []
    for ds, e, c in (("A", 40_000, 31_000), ("B", 52_000, 38_000), ("C", 61_000, 44_000)):
        g = {"n_left": 100, "n_right": 2000, "n_edges": e}
        rs += [imbea(ds, algo_s=[e / 1e4], graph=g, count=c),
               parmbe(ds, 2, algo_s=[e / 2e4], graph=g, count=c)]
    info = time_vs_size.plot(rs, ["A", "B", "C"], tmp_path / "t.png", tmp_path / "t.pdf")
    assert info["overlapping"] == []
    assert "40,000" in info["axes"][1]["xticklabels"]  # plain numbers


def test_the_overlap_check_sees_labels_that_run_together():
    from mbebench.report import figure

    fig = figure.new(3.0, 2.0)
    ax = fig.subplots()
    ax.set_xticks([1.0, 1.01], ["30000", "40000"])
    assert figure.overlapping_ticklabels(fig) == [("30000", "40000")]
    ax.set_xticks([1.0, 2.0], ["3", "4"])
    assert figure.overlapping_ticklabels(fig) == []


# --------------------------------------------------------------------------- item 4


def _fingerprint_only_mismatch() -> list[dict]:
    return [imbea("A", count=5, fingerprint=FP_A), parmbe("A", 2, count=5, fingerprint=FP_B),
            imbea("B", count=3, fingerprint=FP_A), parmbe("B", 2, count=4, fingerprint=FP_B)]


def test_a_mismatch_says_whether_the_count_or_only_the_fingerprint_disagreed(tmp_path):
    """Before: the .tex said the engines "disagree on the number of maximal bicliques"
    when only the fingerprints differed."""
    write_tables(_fingerprint_only_mismatch(), ["A", "B"], tmp_path)
    tex = (tmp_path / "speedup.tex").read_text()
    md = (tmp_path / "speedup.md").read_text()
    summ = (tmp_path / "summary.md").read_text()
    for text in (tex, md, summ):
        flat = " ".join(text.split())
        assert "on the number of maximal bicliques of B" in flat
        assert "the number of maximal bicliques of A" not in flat
        assert "on which maximal bicliques they found (the same number, another fingerprint) " \
               "of A" in flat
    csv = pd.read_csv(tmp_path / "speedup.csv").set_index("dataset")
    assert (csv.loc["A", "disagree on"], csv.loc["B", "disagree on"]) == ("fingerprint", "count")
    paper_ds = [{**r, "dataset": {"A": "Marvel", "B": "Unicode"}[r["dataset"]]}
                for r in _fingerprint_only_mismatch()]
    write_tables(paper_ds, ["Marvel", "Unicode"], tmp_path)
    vs = (tmp_path / "vs_paper.md").read_text()
    col = md_tables(vs)[0][0].index("#MB")
    assert md_row(vs, "Marvel")[col] == "5 MISMATCH (fingerprint)"
    assert md_row(vs, "Unicode")[col] == "3 / 4 MISMATCH (count)"
    write_tables(_fingerprint_only_mismatch()[:2], ["A"], tmp_path)
    tex = (tmp_path / "speedup.tex").read_text()
    assert "number of maximal bicliques" not in tex and "another fingerprint" in tex


# --------------------------------------------------------------------------- item 6


def test_the_breakdown_label_shows_table_ones_time_first_and_names_the_other(tmp_path):
    rs = marvel_rows()
    next(r for r in rs if r["label"] == "cuMBE")["algo_s"] = [0.991]
    info = breakdown.plot(rs, ["Marvel"], tmp_path / "b.png", tmp_path / "b.pdf")
    ds, table_one, *instr = info["group_labels"][0].split("\n")
    assert (ds, table_one) == ("Marvel", "Table I: 0.991 s")
    assert instr[0] == "instrumented build:" and instr[1].endswith(" s per warp")
    assert info["overlapping"] == [] and info["clipped"] == []
    sharded(next(r for r in rs if r["label"] == "cuMBE"))
    info = breakdown.plot(rs, ["Marvel"], tmp_path / "b.png", tmp_path / "b.pdf")
    assert info["group_labels"][0].split("\n")[1] == f"Table I: 0.991 s {SHARDED_MARK}"
    assert "Marvel (4 shards)" in info["footer"]


def test_the_breakdown_labels_of_neighbours_do_not_run_together(tmp_path):
    """Before: with the device result set's eight datasets, "… s per warp" of one group ran
    into the next group's line."""
    names = [f"dataset-{i}" for i in range(8)]
    rs = [{**r, "dataset": ds} for ds in names for r in marvel_rows() if r["engine"] == "cumbe"]
    for r in rs:
        r["stats"] = {**r["stats"], "phases_s": {k: v / 10 for k, v in PHASES.items()}}
    info = breakdown.plot(rs, names, tmp_path / "b.png", tmp_path / "b.pdf")
    assert "4.0e-03 s per warp" in info["group_labels"][0]
    assert info["overlapping"] == []


def test_workload_draws_few_values_as_dots_not_a_box(tmp_path):
    """Before: a box plot of ParMBE p=2's two busy times."""
    g = MARVEL
    rs = [parmbe("A", 2, algo_s=[1.0], graph=g, stats={"worker_busy_s": [1.0, 3.0]}),
          parmbe("B", 16, algo_s=[1.0], graph=g,
                 stats={"worker_busy_s": [1.0 + 0.01 * i for i in range(16)]})]
    info = workload.plot(rs, ["A", "B"], tmp_path / "w.png", tmp_path / "w.pdf")
    drawn = info["parmbe"]["series"]["ParMBE"]
    assert drawn["A"]["kind"] == "points" and drawn["A"]["values"] == [0.5, 1.5]
    assert drawn["B"]["kind"] == "box" and drawn["B"]["n"] == 16
    title = info["axes"][1]["title"]
    assert "box: quartiles, whiskers: min/max" in title
    assert "fewer than 8 values: each value a dot" in title


def test_a_process_without_work_is_a_dot_the_reader_sees(tmp_path):
    """The tiny graphs: ParMBE p=2 where one process found all the work, the other none.
    Before: a log axis (the values span a decade) had no place for the zero."""
    rs = [parmbe("A", 2, algo_s=[1.0], stats={"worker_busy_s": [0.0, 2.0]}),
          parmbe("B", 4, algo_s=[1.0], stats={"worker_busy_s": [0.01, 1.0, 1.0, 1.0]})]
    info = workload.plot(rs, ["A", "B"], tmp_path / "w.png", tmp_path / "w.pdf")
    assert info["parmbe"]["series"]["ParMBE"]["A"]["values"] == [0.0, 2.0]
    lo, hi = info["axes"][1]["ylim"]
    assert info["parmbe"]["yscale"] == "linear" and lo <= 0.0 < 2.0 <= hi


def test_report_holds_every_table_its_captions_name(repo_dir):
    """Before: vs_paper.rst promised the paper's speedups, which only
    vs_paper_speedups.csv holds, and that file was not in the report."""
    from mbebench.report import registry

    # the file each caption goes with, as the rules take it from the registry
    reported = {f"{o.name}.{o.shown}": o.caption for o in registry.of_rule("tables")}
    csvs = [n for n in TABLE_FILES if n.endswith(".csv")]
    assert set(csvs) <= set(reported), set(csvs) - set(reported)
    for caption in reported.values():
        text = (repo_dir / "workflow" / "report" / caption).read_text()
        for other in re.findall(r"``([\w.]+\.csv)``", text):
            assert other in reported, (caption, other)
    assert "speedup its text states" not in (repo_dir / "workflow/report/vs_paper.rst").read_text()


# --------------------------------------------------------------------------- item 8


def _no_gpu(ds: str, **kw) -> list[dict]:
    why = "no CUDA device"
    return [imbea(ds, **kw), parmbe(ds, 1, **kw),
            cumbe(ds, "cuMBE", "skipped", message=why), cumbe(ds, "noWS", "skipped", message=why),
            cumbe(ds, "cuMBE", "skipped", instr=True, message=why)]


def test_engines_skipped_everywhere_for_one_reason_are_a_line_not_columns(tmp_path):
    rs = _no_gpu("A") + _no_gpu("B") + [imbea("Gone", "unavailable", message="no file")]
    write_tables(rs, ["A", "B", "Gone"], tmp_path)
    md = (tmp_path / "speedup.md").read_text()
    assert md_tables(md)[0][0] == ["dataset", r"\|U\|", r"\|V\|", r"\|E\|",
                                   r"density 2\|E\|/(\|U\|\|V\|)", "#MB", "iMBEA (s)",
                                   "ParMBE p=1 (s)"]
    assert "skipped on every dataset they were to run on: cuMBE (skipped: no CUDA device). " \
           "No speedup over cuMBE exists." in md
    assert "geometric mean" not in md_tables(md)[0][-1][0]
    tex = (tmp_path / "speedup.tex").read_text()
    assert r"\begin{tabular}{lrrrrrrr}" in tex and "skipped on every dataset" in tex
    summ = (tmp_path / "summary.md").read_text()
    head = md_tables(summ)[0][0]
    assert not [h for h in head if h.startswith("cuMBE")]
    assert "skipped on every dataset they were to run on: cuMBE, cuMBE noWS, cuMBE instr " \
           "(skipped: no CUDA device)." in summ
    assert not [h for h in md_tables(summ)[1][0] if h.startswith("cuMBE")]  # memory table
    # the CSV keeps every column: a program reading it finds the same columns everywhere
    assert "cuMBE [s]" in pd.read_csv(tmp_path / "speedup.csv").columns
    assert "cuMBE noWS" in pd.read_csv(tmp_path / "summary.csv").columns


def test_an_engine_not_planned_on_some_datasets_and_skipped_on_the_rest_is_a_line(tmp_path):
    """The shipped .test config runs cuMBE on three of its five graphs: without a GPU the
    summary had eight columns of "skipped: no CUDA device" and "not run"."""
    rs = _no_gpu("A") + [imbea("B"), parmbe("B", 1)]
    write_tables(rs, ["A", "B"], tmp_path)
    summ = (tmp_path / "summary.md").read_text()
    assert not [h for h in md_tables(summ)[0][0] if h.startswith("cuMBE")]
    assert "cuMBE, cuMBE noWS, cuMBE instr (skipped: no CUDA device)" in summ


def test_an_engine_that_ran_somewhere_keeps_its_column(tmp_path):
    rs = _no_gpu("A") + [imbea("B"), cumbe("B", algo_s=[0.5])]
    write_tables(rs, ["A", "B"], tmp_path)
    md = (tmp_path / "speedup.md").read_text()
    head = md_tables(md)[0][0]
    assert "cuMBE (s)" in head and md_row(md, "A")[head.index("cuMBE (s)")] == \
        "skipped: no CUDA device"
    assert "skipped on every dataset" not in md
    other_reasons = _no_gpu("A") + _no_gpu("B")
    other_reasons[-3]["message"] = "GPU busy"
    assert speedup.speedup_table(other_reasons, ["A", "B"]).attrs["skipped_everywhere"] == {}
    assert summary.summary_table(other_reasons, ["A", "B"]).attrs["skipped_everywhere"] == {
        "cuMBE noWS": "skipped: no CUDA device", "cuMBE instr": "skipped: no CUDA device"}


def test_a_report_in_the_repository_root_is_ignored_by_git(repo_dir):
    """`snakemake --report` writes report.html where it runs (the repository root, or
    .test with --directory .test); it must not show as an untracked file."""
    for path in ("report.html", ".test/report.html", "report.zip"):
        out = subprocess.run(["git", "check-ignore", "-q", path], cwd=repo_dir, check=False)
        assert out.returncode == 0, path
    assert subprocess.run(["git", "check-ignore", "-q", "docs/report.html"],
                          cwd=repo_dir, check=False).returncode == 1  # only the root's


@pytest.mark.latex
def test_marks_compile_in_latex(tmp_path):
    import shutil

    if shutil.which("pdflatex") is None:
        pytest.skip("needs pdflatex")
    write_tables(two_marvels(), ["Marvel", "Marvel-4"], tmp_path)
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage[T1]{fontenc}"
                                      "\\begin{document}\\input{speedup.tex}\\end{document}")
    out = subprocess.run(["pdflatex", "-interaction=nonstopmode", "doc.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stdout[-2000:]

