"""Issue 19's table items: the paper's orientation and density, the side each engine
enumerated from, memory in the summary, and our results beside the paper's."""

from __future__ import annotations

import pandas as pd
import pytest
from mdtable import row as md_row
from mdtable import tables as md_tables
from rowfactory import cumbe, imbea, parmbe
from test_report_figures import MARVEL, marvel_rows

from mbebench import paper
from mbebench.report import speedup, summary, vs_paper, write_tables

COMPLETE = {"n_left": 4, "n_right": 5, "n_edges": 20}


def test_sizes_follow_the_papers_orientation_and_say_which_side_each_engine_took():
    """Marvel's CSR is 6,486 | 12,942 (KONECT's column order); the paper's |U| is 12,942."""
    rs = marvel_rows()
    rs[-1]["stats"] = {"side": "right"}  # iMBEA from the CSR's right side: the paper's U
    small = imbea("Mine", algo_s=[1.0], graph={"n_left": 3, "n_right": 7, "n_edges": 9},
                  stats={"side": "left"})
    df = summary.summary_table(rs + [small], ["Marvel", "Mine"])
    m = df.set_index("dataset").loc["Marvel"]
    assert (m["|U|"], m["|V|"], m["|E|"]) == (12942, 6486, 96662)
    assert m["enumerated from"] == "U: iMBEA; V: cuMBE, cuMBE noWS, cuMBE instr, cuMBE noWS instr"
    mine = df.set_index("dataset").loc["Mine"]  # not a paper dataset: the CSR's sides
    assert (mine["|U|"], mine["|V|"], mine["enumerated from"]) == (3, 7, "U (all)")
    assert df.attrs["swapped"] == ["Marvel"]
    t1 = speedup.speedup_table(rs, ["Marvel"]).set_index("dataset").loc["Marvel"]
    assert (t1["|U|"], t1["|V|"]) == (12942, 6486)
    md = summary.summary_markdown(df)
    assert "the CSR's sides swapped for Marvel" in md


def test_density_is_the_papers_and_its_header_names_it():
    """The paper's Sec. V-B: density = 2|E| / (|L| |R|), so a complete graph has 2."""
    rs = [imbea("K45", algo_s=[1.0], graph=COMPLETE)]
    df = summary.summary_table(rs, ["K45"])
    assert df["density"].iloc[0] == pytest.approx(2.0)
    md = summary.summary_markdown(df)
    assert md_tables(md)[0][0][4] == r"density 2\|E\|/(\|U\|\|V\|)"
    assert md_row(md, "K45")[4] == "2.00e+00"
    assert "the paper's definition (a complete bipartite graph has 2)" in md
    assert md_tables(speedup.speedup_markdown(speedup.speedup_table(rs, ["K45"])))[0][0][4] \
        == r"density 2\|E\|/(\|U\|\|V\|)"


def test_the_summary_has_each_runs_peak_rss_and_gpu_memory(tmp_path):
    rs = marvel_rows()
    for r in rs:
        if r["engine"] == "cumbe":
            r["stats"]["memory_bytes"] = 278_374_416
            r["peak_rss_bytes"] = 467_587_072
    write_tables(rs, ["Marvel"], tmp_path)
    csv = pd.read_csv(tmp_path / "summary.csv").set_index("dataset")
    assert csv.loc["Marvel", "cuMBE peak RSS [B]"] == 467_587_072
    assert csv.loc["Marvel", "cuMBE GPU [B]"] == 278_374_416
    assert csv.loc["Marvel", "iMBEA peak RSS [B]"] == 1 << 20  # rowfactory's
    assert "iMBEA GPU [B]" not in csv.columns  # no GPU: no column
    md = (tmp_path / "summary.md").read_text()
    mem = md_tables(md)[1]
    assert mem[0][:2] == ["dataset", "iMBEA (RSS)"] and "cuMBE (RSS / GPU)" in mem[0]
    assert md_row(md, "Marvel", table=1)[mem[0].index("cuMBE (RSS / GPU)")] == \
        "446 MiB / 265 MiB"


def test_sharded_rows_show_like_any_other_with_their_shard_count(tmp_path):
    rs = [imbea("A", algo_s=[2.0]), parmbe("A", 2), imbea("B", algo_s=[3.0]), parmbe("B", 2)]
    write_tables(rs, ["A", "B"], tmp_path)
    assert "shards" not in pd.read_csv(tmp_path / "summary.csv").columns  # none sharded
    rs[2]["shards"] = rs[3]["shards"] = {"n": 4, "time_sum_s": 9.0}
    write_tables(rs, ["A", "B"], tmp_path)
    csv = pd.read_csv(tmp_path / "summary.csv").set_index("dataset")
    assert csv["shards"].to_dict() == {"A": 1, "B": 4} and csv.loc["B", "iMBEA"] == 3.0
    md = (tmp_path / "summary.md").read_text()
    head = md_tables(md)[0][0]
    assert head[head.index("fingerprint") + 1] == "shards"
    assert md_row(md, "B")[head.index("shards")] == "4"
    assert md_row(md, "A")[head.index("shards")] == "–"
    assert "the slowest shard's" in md
    sp = (tmp_path / "speedup.md").read_text()
    assert "(their makespan on N machines), not one machine's: B (4 shards)." in sp  # not A


def test_machine_paths_are_cut_in_the_markdown_but_kept_in_the_csv(tmp_path):
    why = "dataset 'Gone': download of file:///work/main/.mirror/g.tar.bz2 failed"
    rs = [imbea("A", algo_s=[1.0]), imbea("Gone", "unavailable", message=why)]
    write_tables(rs, ["A", "Gone"], tmp_path)
    for name in ("summary.md", "speedup.md"):
        text = (tmp_path / name).read_text()
        assert "/work" not in text and "download of g.tar.bz2 failed" in text, name
    assert pd.read_csv(tmp_path / "summary.csv").set_index("dataset").loc[
        "Gone", "unavailable"] == why


def test_beside_the_paper_sizes_and_the_speedups_it_states(tmp_path):
    rs = marvel_rows()
    sim = cumbe("Unicode", "cuMBE", algo_s=[0.001], graph={"n_left": 254, "n_right": 614,
                                                           "n_edges": 1255})
    sim["simulated"] = True
    rs += [sim, parmbe("Unicode", 16, algo_s=[0.005])]
    write_tables(rs, ["Marvel", "Unicode"], tmp_path)
    sizes = pd.read_csv(tmp_path / "vs_paper.csv").set_index("dataset")
    assert list(sizes.index) == ["Marvel", "Unicode"]  # the paper's order, those that ran
    m = sizes.loc["Marvel"]
    assert (m["paper |U|"], m["|U|"], m["paper |E|"], m["|E| ratio"]) == (12942, 12942, 96662,
                                                                          1.0)
    assert m["ParMBE processes"] == 16 and m["speedup"] == pytest.approx(0.06 / 0.0402)
    assert pd.isna(sizes.loc["Unicode", "cuMBE [s]"])  # simulated: no GPU time
    pub = pd.read_csv(tmp_path / "vs_paper_speedups.csv").set_index("figure")
    ws = pub.loc["work stealing (noWS / cuMBE), Marvel"]
    assert (ws["paper"], ws["ours"]) == (1.7, pytest.approx(0.166 / 0.0402))
    assert ws["ratio"] == pytest.approx(0.166 / 0.0402 / 1.7)
    serial = pub.loc["cuMBE vs serial (paper: ooMBE; ours: ooMBE if run, else iMBEA), "
                     "geometric mean"]
    assert serial["ours"] == pytest.approx(0.6 / 0.0402) and serial["datasets"] == 1
    assert (serial["of"], pub.loc["work stealing (noWS / cuMBE), small datasets, average",
                                  "datasets"]) == (13, 0)
    md = (tmp_path / "vs_paper.md").read_text()
    assert md_row(md, "Marvel")[8] == vs_paper.NOT_PUBLISHED  # Table I is not in our copy
    assert "left out of the copy of the paper" in md


def test_published_per_dataset_figures_are_set_beside_ours_with_the_ratio(monkeypatch):
    monkeypatch.setattr(paper, "TABLE_I", {"Marvel": {"count": 206_135, "cumbe_s": 0.08,
                                                      "parmbe_s": 0.4}})
    df = vs_paper.datasets_table(marvel_rows()).set_index("dataset")
    m = df.loc["Marvel"]
    assert m["#MB ratio"] == pytest.approx(10 / 206_135)  # rowfactory's count is 10
    assert m["cuMBE ratio"] == pytest.approx(0.0402 / 0.08)
    assert m["paper speedup"] == pytest.approx(5.0)
    assert m["speedup ratio"] == pytest.approx((0.06 / 0.0402) / 5.0)


def test_the_paper_data_match_the_shared_copy(repo_dir):
    """paper.DATASETS is transcribed from ../shared/datasets.md: same order and sizes."""
    shared = repo_dir.parent / "shared" / "datasets.md"
    if not shared.is_file():
        pytest.skip("../shared/datasets.md is not here")
    rows = [ln.split("|")[1:-1] for ln in shared.read_text().splitlines()
            if ln.startswith("| ") and not ln.startswith("| paper name")]
    got = {r[0].strip(): tuple(int(x.strip().replace(",", "")) for x in r[2:5]) for r in rows}
    assert list(got) == list(paper.DATASETS) and got == paper.DATASETS
    assert MARVEL["n_left"] == paper.DATASETS["Marvel"][1]
