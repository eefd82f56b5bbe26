"""mbebench.report: summary table, Table I (speedups), agreement check, writers."""

from __future__ import annotations

import math
import re
import shutil
import subprocess

import pandas as pd
import pytest
from mdtable import row as md_row
from mdtable import tables as md_tables
from rowfactory import cumbe, imbea, make_row, parmbe

from mbebench.report import agreement, speedup, summary, write_tables

FP_A = "0x00000000000000aa"
FP_B = "0x00000000000000bb"
G = {
    "Alpha_1": {"n_left": 100, "n_right": 50, "n_edges": 400},
    "Beta%2": {"n_left": 10, "n_right": 1000, "n_edges": 30},
    "Gamma&3": {"n_left": 7, "n_right": 9, "n_edges": 20},
    "Delta": {"n_left": 3, "n_right": 4, "n_edges": 5},
}
DATASETS = ["Alpha_1", "Beta%2", "Gamma&3", "Delta", "Epsilon"]  # Epsilon: no rows at all


def scenario(with_mismatch: bool = True) -> list[dict]:
    def ok(make, ds, *args, algo, count=10, fp=FP_A, **kw):
        return make(ds, *args, algo_s=algo, count=count, fingerprint=fp, graph=G[ds], **kw)

    rows = [
        ok(imbea, "Alpha_1", algo=[4.0, 5.0, 6.0]),
        ok(parmbe, "Alpha_1", 1, algo=[3.0]),
        ok(parmbe, "Alpha_1", 2, algo=[2.0, 2.2, 1.8]),
        ok(parmbe, "Alpha_1", 10, algo=[0.9]),
        ok(cumbe, "Alpha_1", "cuMBE", algo=[0.5, 0.4, 0.6]),
        # slow instrumented build: never "the" time
        ok(cumbe, "Alpha_1", "cuMBE", instr=True, algo=[100.0]),
        imbea("Beta%2", "timeout", timeout_s=600),
        ok(parmbe, "Beta%2", 1, algo=[8.0], count=3),
        parmbe("Beta%2", 2, "error", message="MemoryError: boom | again"),
        ok(cumbe, "Beta%2", "cuMBE", algo=[2.0], count=3),
        ok(imbea, "Gamma&3", algo=[9.0], count=4),
        ok(parmbe, "Gamma&3", 1, algo=[6.0], count=4),
        ok(parmbe, "Gamma&3", 2, algo=[3.0], count=4),
        cumbe("Gamma&3", "cuMBE", "skipped", message="no CUDA device"),
        cumbe("Gamma&3", "cuMBE", "skipped", instr=True, message="no CUDA device"),
        ok(imbea, "Delta", algo=[1.4], count=7),
        ok(parmbe, "Delta", 2, algo=[0.35], count=8 if with_mismatch else 7),
        ok(cumbe, "Delta", "cuMBE", algo=[0.7], count=7),
        ok(cumbe, "Delta", "noWS", instr=True, algo=[0.9], count=7,
           fp=FP_B if with_mismatch else FP_A),
    ]
    return rows


def _row(df, ds):
    return df[df["dataset"] == ds].iloc[0]


# --------------------------------------------------------------------------- summary


def test_summary_table_cells():
    df = summary.summary_table(scenario(), DATASETS)
    assert list(df["dataset"]) == DATASETS
    assert list(df.columns[:7]) == ["dataset", "|U|", "|V|", "|E|", "density", "count",
                                    "fingerprint"]
    # one column per configuration, labelled by the rows: plan order, instrumented last
    cfg_cols = df.attrs["configs"]
    assert list(df.columns[7:7 + len(cfg_cols)]) == cfg_cols
    assert cfg_cols == ["iMBEA", "ParMBE p=1", "ParMBE p=2", "ParMBE p=10", "cuMBE",
                        "cuMBE instr", "cuMBE noWS instr"]
    a = _row(df, "Alpha_1")
    assert (a["|U|"], a["|V|"], a["|E|"]) == (100, 50, 400)
    assert a["density"] == pytest.approx(2 * 400 / (100 * 50))
    assert a["count"] == 10 and a["fingerprint"] == FP_A and a["agree"] is True
    assert a["iMBEA"] == pytest.approx(5.0)
    assert a["cuMBE"] == pytest.approx(0.5)
    b = _row(df, "Beta%2")
    assert b["iMBEA"] == "timeout (600 s)"
    assert b["ParMBE p=2"].startswith("error: MemoryError: boom")
    assert b["ParMBE p=10"] == "not run"
    g = _row(df, "Gamma&3")
    assert g["cuMBE"] == "skipped: no CUDA device"
    d = _row(df, "Delta")
    assert d["agree"] is False
    assert "ParMBE p=2 -> 8" in d["mismatch"] and FP_B in d["mismatch"]
    e = _row(df, "Epsilon")
    assert e["agree"] is None and e["iMBEA"] == "not run"


def test_summary_markdown_marks_mismatch(tmp_path):
    df = summary.summary_table(scenario(), DATASETS)
    summary.write_summary(df, tmp_path / "s.csv", tmp_path / "s.md")
    md = (tmp_path / "s.md").read_text()
    assert "**MISMATCH**" in md
    assert md_row(md, "**Delta**")[-2] == "**MISMATCH**"
    assert md_row(md, "Alpha_1")[-2] == "yes"  # then the side enumerated from
    _check_md_table(md)
    back = pd.read_csv(tmp_path / "s.csv")
    assert list(back["dataset"]) == DATASETS
    assert not list(tmp_path.glob(".*tmp"))  # atomic writes leave nothing behind

    clean = summary.summary_table(scenario(with_mismatch=False), DATASETS)
    summary.write_summary(clean, tmp_path / "c.csv", tmp_path / "c.md")
    assert "MISMATCH" not in (tmp_path / "c.md").read_text()


def _check_md_table(md: str) -> None:
    """Each table's lines have the same number of cells."""
    for table in md_tables(md):
        assert len(table) >= 2
        assert len({len(r) for r in table}) == 1, "every line of a table has as many cells"


# --------------------------------------------------------------------------- agreement


def test_check_agreement():
    with pytest.raises(agreement.CountMismatchError) as e:
        agreement.check_agreement(scenario())
    lines = str(e.value).splitlines()
    assert "Delta" in lines[0] and "Alpha_1" not in lines[0]
    (delta,) = [ln for ln in lines[1:] if ln.startswith("Delta:")]
    assert "ParMBE p=2 -> 8 (" in delta
    assert "cuMBE noWS instr -> 7 (" + FP_B in delta  # instrumented runs count for agreement
    assert "iMBEA" in delta
    agreement.check_agreement(scenario(with_mismatch=False))  # no exception


def test_agreement_report_lists_every_dataset():
    report = agreement.agreement_report(scenario()).splitlines()
    assert [ln.split(":")[0] for ln in report] == ["Alpha_1", "Beta%2", "Gamma&3", "Delta"]
    assert report[0] == f"Alpha_1: 6 ok runs agree: 10 ({FP_A})"
    assert report[3].startswith("Delta: MISMATCH: ") and "ParMBE p=2 -> 8" in report[3]


def test_a_count_only_engine_is_cross_checked_by_its_count():
    def mine(ds, count):
        return make_row(ds, "mine", label="mine", count=count, fingerprint=None)

    agree = [imbea("A", count=5, fingerprint=FP_A), mine("A", 5)]
    agreement.check_agreement(agree)
    df = summary.summary_table(agree, ["A"])
    assert _row(df, "A")["fingerprint"] == FP_A and bool(_row(df, "A")["agree"])
    lying = [imbea("A", count=5, fingerprint=FP_A), mine("A", 6)]
    with pytest.raises(agreement.CountMismatchError, match="mine -> 6 \\(no fingerprint\\)"):
        agreement.check_agreement(lying)
    assert not _row(summary.summary_table(lying, ["A"]), "A")["agree"]


def test_the_same_count_with_another_fingerprint_is_a_mismatch():
    # two engines that find different bicliques, as many of them: not an agreement
    rows = [imbea("A", count=5, fingerprint=FP_A), parmbe("A", 2, count=5, fingerprint=FP_B),
            imbea("B", count=3, fingerprint=FP_A), cumbe("B", "cuMBE", count=3, fingerprint=FP_A)]
    assert list(agreement.mismatches(rows)) == ["A"]
    with pytest.raises(agreement.CountMismatchError) as e:
        agreement.check_all(rows)
    assert str(e.value).splitlines()[0].startswith("count/fingerprint mismatch in 1 dataset(s): A ")
    assert f"iMBEA -> 5 ({FP_A})" in str(e.value) and f"ParMBE p=2 -> 5 ({FP_B})" in str(e.value)
    df = summary.summary_table(rows, ["A", "B"])
    assert not bool(_row(df, "A")["agree"]) and bool(_row(df, "B")["agree"])
    assert _row(df, "A")["fingerprint"] == f"{FP_A} / {FP_B}"
    assert agreement.agreement_report(rows).splitlines()[0].startswith("A: MISMATCH: ")


# --------------------------------------------------------------------------- Table I


def _geo(xs):
    return math.prod(xs) ** (1.0 / len(xs))


def test_speedup_table_values():
    df = speedup.speedup_table(scenario(), DATASETS)
    assert list(df["dataset"]) == [*DATASETS, "geometric mean"]
    timed = [c for c in df.columns if c.endswith(" [s]") and " min " not in c
             and " max " not in c]
    assert timed == ["iMBEA [s]", "ParMBE p=1 [s]", "ParMBE p=2 [s]", "ParMBE p=10 [s]",
                     "cuMBE [s]"]
    a = _row(df, "Alpha_1")
    assert a["maximal bicliques"] == 10
    assert a["cuMBE [s]"] == pytest.approx(0.5)  # not the instrumented 100 s
    assert (a["cuMBE min [s]"], a["cuMBE max [s]"]) == (0.4, 0.6)
    assert (a["iMBEA min [s]"], a["iMBEA max [s]"]) == (4.0, 6.0)
    assert a["cuMBE vs iMBEA"] == pytest.approx(10.0)
    assert a["cuMBE vs ParMBE p=2"] == pytest.approx(4.0)
    assert a["cuMBE vs ParMBE p=10"] == pytest.approx(1.8)
    b = _row(df, "Beta%2")
    assert b["iMBEA [s]"] == "timeout (600 s)"
    assert math.isnan(b["cuMBE vs iMBEA"])
    assert b["cuMBE vs ParMBE p=1"] == pytest.approx(4.0)
    assert str(b["ParMBE p=2 [s]"]).startswith("error:")
    g = _row(df, "Gamma&3")
    assert g["cuMBE [s]"] == "skipped: no CUDA device"
    assert math.isnan(g["cuMBE vs iMBEA"]) and math.isnan(g["cuMBE vs ParMBE p=1"])
    d = _row(df, "Delta")
    assert d["agree"] is False and "8" in str(d["maximal bicliques"])

    geo = _row(df, "geometric mean")
    # independently: only datasets where both times exist
    assert geo["cuMBE vs iMBEA"] == pytest.approx(_geo([5.0 / 0.5, 1.4 / 0.7]))
    assert geo["cuMBE vs ParMBE p=1"] == pytest.approx(_geo([3.0 / 0.5, 8.0 / 2.0]))
    assert geo["cuMBE vs ParMBE p=2"] == pytest.approx(_geo([2.0 / 0.5, 0.35 / 0.7]))
    assert geo["cuMBE vs ParMBE p=10"] == pytest.approx(1.8)
    assert df.attrs["geomean_n"]["cuMBE vs iMBEA"] == 2


def test_speedup_writers(tmp_path):
    df = speedup.speedup_table(scenario(), DATASETS)
    speedup.write_speedup(df, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t.tex")
    csv = pd.read_csv(tmp_path / "t.csv")
    assert "cuMBE min [s]" in csv.columns and "iMBEA max [s]" in csv.columns
    assert csv["dataset"].iloc[-1] == "geometric mean"

    md = (tmp_path / "t.md").read_text()
    _check_md_table(md)
    assert "**MISMATCH**" in md
    assert "MISMATCH" in md_row(md, "**Delta**")[5]
    assert "timeout (600 s)" in md and "skipped: no CUDA device" in md
    assert "10.00×" in md
    assert "MemoryError: boom \\| again" in md  # a pipe in a message cannot break the table

    tex = (tmp_path / "t.tex").read_text()
    _check_tex(tex)
    assert r"Alpha\_1" in tex and r"Beta\%2" in tex and r"Gamma\&3" in tex
    assert "Alpha_1" not in tex.replace(r"Alpha\_1", "")
    assert r"\textbf{Delta}" in tex and "mismatch" in tex
    assert "toprule" not in tex and "booktabs" not in tex


def _check_tex(tex: str) -> None:
    body = [ln for ln in tex.splitlines() if not ln.startswith("%")]
    assert body[0].startswith(r"\begin{tabular}{") and body[-1] == r"\end{tabular}"
    spec = re.match(r"\\begin\{tabular\}\{([lrc]+)\}", body[0]).group(1)
    depth = 0
    for ch in re.sub(r"\\[{}]", "", tex):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0
    assert depth == 0, "braces balance"
    for ln in body[1:-1]:
        if ln in (r"\hline",) or ln.startswith(r"\multicolumn"):
            continue
        assert ln.endswith(r" \\")
        cells = re.split(r"(?<!\\)&", ln[: -len(r" \\")])
        assert len(cells) == len(spec), ln
        for c in cells:
            assert not re.search(r"(?<!\\)[%_#]", c), c  # specials escaped


@pytest.mark.latex
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex")
def test_tex_compiles(tmp_path):
    df = speedup.speedup_table(scenario(), DATASETS)
    speedup.write_speedup(df, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "t.tex")
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\\usepackage[T1]{fontenc}\\begin{document}"
        "\\resizebox{\\textwidth}{!}{\\input{t.tex}}\\end{document}\n".replace(
            "\\begin{document}", "\\usepackage{graphicx}\\begin{document}"))
    p = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


# --------------------------------------------------------------------------- CLI hook


def test_write_all_writes_mismatches_without_failing(tmp_path):
    """Failing is the check rule's job: a failed job's outputs are deleted by Snakemake."""
    out = tmp_path / "tables"
    write_tables(scenario(), DATASETS, out)
    with pytest.raises(agreement.CountMismatchError, match="Delta"):
        agreement.check_agreement(scenario())
    for name in ("summary.csv", "summary.md", "speedup.csv", "speedup.md", "speedup.tex"):
        assert (out / name).is_file(), name
    assert "**MISMATCH**" in (out / "summary.md").read_text()
    assert "**MISMATCH**" in (out / "speedup.md").read_text()

    paths = write_tables(scenario(with_mismatch=False), DATASETS, tmp_path / "ok")
    assert [p.name for p in paths] == ["summary.csv", "summary.md", "speedup.csv",
                                       "speedup.md", "speedup.tex", "vs_paper.csv",
                                       "vs_paper.md", "vs_paper_speedups.csv"]
    assert all(p.is_file() for p in paths)
    assert "MISMATCH" not in (tmp_path / "ok" / "speedup.md").read_text()


def test_k_sweep_is_columns_with_no_new_code():
    rows = [imbea("A", algo_s=[4.0])] + [cumbe("A", k=k, algo_s=[t]) for k, t in
                                         ((2, 1.0), (8, 0.5), (24, 2.0))]
    summ = summary.summary_table(rows, ["A"])
    assert summ.attrs["configs"] == ["iMBEA", "cuMBE k=2", "cuMBE k=8", "cuMBE k=24"]
    assert _row(summ, "A")["cuMBE k=8"] == pytest.approx(0.5)
    speed = speedup.speedup_table(rows, ["A"])
    # the first matching configuration (smallest k) is the reference; the sweep's others
    # are compared to it
    assert speed.attrs["reference"] == "cuMBE k=2"
    assert _row(speed, "A")["cuMBE k=2 vs iMBEA"] == pytest.approx(4.0)
    assert _row(speed, "A")["cuMBE k=2 vs cuMBE k=8"] == pytest.approx(0.5)


def test_no_gpu_no_parmbe():
    rows = [imbea("A", algo_s=[1.0])]
    df = speedup.speedup_table(rows, ["A"])
    assert list(df["dataset"]) == ["A", "geometric mean"]
    assert _row(df, "A")["cuMBE [s]"] == "not run"
    assert math.isnan(_row(df, "geometric mean")["cuMBE vs iMBEA"])
    speedup.speedup_latex(df)  # renders without any speedup


def test_report_captions_are_valid_rst(repo_dir):
    docutils_core = pytest.importorskip("docutils.core")
    import io

    assert 'report: "workflow/report/workflow.rst"' in (repo_dir / "Snakefile").read_text()
    names = {p.name for p in (repo_dir / "workflow" / "report").glob("*.rst")}
    assert {"workflow.rst", "summary.rst", "speedup.rst", "workload.rst", "breakdown.rst",
            "scaling.rst"} <= names
    for name in sorted(names):
        err = io.StringIO()
        text = (repo_dir / "workflow" / "report" / name).read_text()
        docutils_core.publish_doctree(text, settings_overrides={"warning_stream": err,
                                                                 "report_level": 2})
        assert err.getvalue() == "", f"{name}: {err.getvalue()}"


def test_simulated_gpu_rows_give_no_gpu_time_or_speedup():
    sim = cumbe("Delta", "cuMBE", algo_s=[0.01], graph=G["Delta"])
    sim["simulated"] = True
    rows = [imbea("Delta", algo_s=[2.0], graph=G["Delta"]), sim]
    df = speedup.speedup_table(rows, ["Delta"])
    rec = df.set_index("dataset").loc["Delta"]
    assert rec["cuMBE [s]"] == speedup.SIMULATED
    assert math.isnan(rec["cuMBE vs iMBEA"])


def test_tables_read_the_rows_fields_not_their_file_names_or_order():
    rows = scenario()
    renamed = [{**r, "run_id": f"run{i}"} for i, r in enumerate(rows)][::-1]
    for func in (summary.summary_table, speedup.speedup_table):
        pd.testing.assert_frame_equal(func(rows, DATASETS), func(renamed, DATASETS))
    assert agreement.mismatches(rows) == agreement.mismatches(renamed)


# --------------------------------------------------------------------------- issue 11


def test_sizes_come_from_the_csr_metadata_when_no_run_has_them(tmp_path):
    rows = [imbea("A", "timeout", timeout_s=60), imbea("B", graph=G["Delta"])]
    sizes = {"A": {"n_left": 7, "n_right": 8, "n_edges": 9}}
    write_tables(rows, ["A", "B"], tmp_path, meta=sizes)
    for name in ("summary.csv", "speedup.csv"):
        df = pd.read_csv(tmp_path / name).set_index("dataset")
        assert (df.loc["A", "|U|"], df.loc["A", "|V|"], df.loc["A", "|E|"]) == (7, 8, 9), name
    md = (tmp_path / "summary.md").read_text()
    assert md_row(md, "A")[1:4] == ["7", "8", "9"], md


def test_counts_are_whole_numbers_and_fingerprints_never_nan(tmp_path):
    rows = [imbea("A", algo_s=[1.0], count=9, fingerprint=FP_A), imbea("B", "timeout"),
            make_row("C", "mine", label="mine", fingerprint=None, count=4)]
    write_tables(rows, ["A", "B", "C"], tmp_path)
    for name, col in (("summary.csv", "count"), ("speedup.csv", "maximal bicliques")):
        text = (tmp_path / name).read_text()
        assert re.search(r"^A,([^,]*,){4}9,", text, flags=re.M), (name, text)
        assert "9.0" not in text and "4.0" not in text, name
    md = (tmp_path / "summary.md").read_text()
    assert "nan" not in md.lower().replace("nanosec", "")
    assert md_row(md, "C")[5:7] == ["4", "–"]  # the count, and no fingerprint: a dash, not nan


def test_simulator_seconds_say_so_and_are_no_spread():
    sim = cumbe("Delta", "cuMBE", algo_s=[0.01, 0.03], graph=G["Delta"])
    sim["simulated"] = True
    rows = [imbea("Delta", algo_s=[2.0], graph=G["Delta"]), sim]
    speed = speedup.speedup_table(rows, ["Delta"]).set_index("dataset").loc["Delta"]
    assert speed["cuMBE [s]"] == speedup.SIMULATED
    assert math.isnan(speed["cuMBE min [s]"]) and math.isnan(speed["cuMBE max [s]"])
    summ = summary.summary_table(rows, ["Delta"])
    assert _row(summ, "Delta")["cuMBE"] == "0.020 (simulator)"
    md = summary.summary_markdown(summ)
    assert "cuMBE ran in the CUDA simulator on the CPU" in md and "not GPU times" in md


def test_unavailable_datasets_are_listed_with_their_reason(tmp_path):
    why = "dataset 'Gone': download of http://x/y.tar.bz2 failed after 3 attempts: HTTP 503"
    rows = scenario(with_mismatch=False) + [
        imbea("Gone", "unavailable", message=why), parmbe("Gone", 1, "unavailable", message=why)]
    extra = {"Late": "dataset 'Late': reading graphs/out.late failed: No such file or directory"}
    names = [*DATASETS, "Gone", "Late"]
    write_tables(rows, names, tmp_path, unavailable=extra)
    summary = pd.read_csv(tmp_path / "summary.csv").set_index("dataset")
    assert summary.loc["Gone", "unavailable"] == why
    assert summary.loc["Late", "unavailable"] == extra["Late"]
    assert summary.loc["Gone", "iMBEA"] == "unavailable"
    assert pd.isna(summary.loc["Alpha_1", "unavailable"])
    md = (tmp_path / "summary.md").read_text()
    assert "**2 dataset(s) unavailable**" in md
    assert f"- **Gone**: {why}" in md and f"- **Late**: {extra['Late']}" in md
    assert md_row(md, "Gone")[-2] == "unavailable"
    speed_md = (tmp_path / "speedup.md").read_text()
    assert f"- Gone: {why}\n- Late: {extra['Late']}\n" in speed_md
    assert r"\multicolumn{15}{l}{Unavailable (not run): Gone, Late.}" in (
        tmp_path / "speedup.tex").read_text()
    # the geometric mean is over the datasets that ran
    assert speedup.speedup_table(rows, names).attrs["geomean_n"]["cuMBE vs iMBEA"] == 2


def test_the_final_check_names_every_unavailable_dataset_on_a_line_of_its_own():
    rows = scenario(with_mismatch=False) + [imbea("Gone", "unavailable", message="HTTP 404")]
    agreement.check_all(scenario(with_mismatch=False))  # all there: passes
    with pytest.raises(agreement.NotAllDatasetsRan) as e:
        agreement.check_all(rows, {"Late": "no such file"})
    assert str(e.value).splitlines() == [
        "2 dataset(s) unavailable, left out of the tables (the next run tries them again): "
        "Gone, Late", "Gone: unavailable: HTTP 404", "Late: unavailable: no such file"]
    with pytest.raises(agreement.CountMismatchError) as e:  # a mismatch too: both said
        agreement.check_all(scenario() + rows[-1:])
    assert "Delta" in str(e.value) and "Gone: unavailable: HTTP 404" in str(e.value)
    report = agreement.agreement_report(rows, {"Late": "no such file"})
    assert "Gone: unavailable: HTTP 404" in report and "Late: unavailable: no such file" in report


def test_the_summary_says_where_the_runs_ran():
    row = imbea("A")
    row["env"] = {"cpu_model": "Intel Xeon", "cpu_count": 16, "gpu": "NVIDIA H100",
                  "gpu_driver": "580.1", "cuda_driver": "13.0", "numba": "0.68.1",
                  "numba_cuda": "0.30.4"}
    md = summary.summary_markdown(summary.summary_table([row], ["A"]))
    assert md.rstrip().splitlines()[-1] == (
        "Ran on: Intel Xeon (16 logical cores); NVIDIA H100 (driver 580.1, CUDA 13.0); "
        "numba 0.68.1, numba-cuda 0.30.4.")
