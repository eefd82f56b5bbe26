"""The report package writes the same table content as the modules it replaced.

``tests/data/tiny/`` holds the rows and CSR metadata of the pipeline on the tiny graphs
(``snakemake --cores 2 --directory .test`` at 3248366) and, in ``before/``, the tables
that the old ``mbebench/tables.py`` wrote from them.  Markdown and LaTeX are compared
cell by cell (pandas pads the cells: whitespace differs, content does not); what was
changed on purpose is listed here, each with why.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from mdtable import tables as md_tables

from mbebench import dataset_status, rows
from mbebench.report import write_tables

DATA = Path(__file__).parent / "data" / "tiny"
DATASETS = ["paper-fig1", "crown-8", "complete-4x5", "random-shared-ids", "hubs"]

# deliberate changes to the tables (issue 19)
RENAMED_MD = {"density": r"density 2\|E\|/(\|U\|\|V\|)"}  # the header names the formula
NEW_SUMMARY_MD = {"enumerated from"}  # the side each engine started from
CHANGED_PROSE = {
    # the density definition is the paper's: said so; |U|, |V| follow the paper's orientation
    "Fingerprint: of the runs that compute one (a command-line engine may give only its "
    "count). Density: 2|E| / (|U| |V|).",
    "Times: median algorithm seconds over the repeats (spread in speedup.csv). Speedup: "
    "t(other) / t(cuMBE). #MB: number of maximal bicliques. Density: 2|E| / (|U| |V|). "
    "Geometric mean over the datasets where both times exist (cuMBE vs iMBEA: 0 of 5; "
    "cuMBE vs ParMBE p=1: 0 of 5; cuMBE vs ParMBE p=2: 0 of 5).",
}
TEX_CELLS = {r"\emph{Geo.\ mean}": "Geo. mean"}  # pandas escapes text, no markup inside


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tables")
    metas = sorted(DATA.glob("csr/*.json"))
    write_tables(rows.load_rows(DATA / "runs"), DATASETS, out,
                 meta=dataset_status.graph_sizes(metas),
                 unavailable=dataset_status.unavailable_datasets(metas))
    return out


def prose(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln and not ln.startswith("|")]


def as_columns(table: list[list[str]]) -> dict[str, list[str]]:
    header, *body = table
    return {h: [r[i] for r in body] for i, h in enumerate(header)}


def tex_rows(text: str) -> list[list[str]]:
    out = []
    for line in text.splitlines():
        if line.endswith(r"\\") and not line.startswith(r"\multicolumn"):
            out.append([TEX_CELLS.get(c.strip(), c.strip().replace("{,}", ","))
                        for c in re.split(r"(?<!\\)&", line[:-2])])
    return out


def test_csv_content_is_unchanged_and_new_columns_are_appended(written):
    for name in ("summary.csv", "speedup.csv"):
        before = pd.read_csv(DATA / "before" / name, dtype=str, keep_default_na=False)
        after = pd.read_csv(written / name, dtype=str, keep_default_na=False)
        assert list(after.columns[: len(before.columns)]) == list(before.columns), name
        pd.testing.assert_frame_equal(after[before.columns], before, obj=name)
    added = pd.read_csv(written / "summary.csv").columns[21:]
    assert added[0] == "enumerated from"
    assert all(c.endswith((" peak RSS [B]", " GPU [B]")) for c in added[1:])


@pytest.mark.parametrize("name", ["summary.md", "speedup.md"])
def test_markdown_cells_are_unchanged(written, name):
    before, after = (p.read_text() for p in (DATA / "before" / name, written / name))
    old, new = md_tables(before), md_tables(after)
    old_cols, new_cols = as_columns(old[0]), as_columns(new[0])
    for h, cells in old_cols.items():
        assert new_cols[RENAMED_MD.get(h, h)] == cells, (name, h)
    extra = set(new_cols) - {RENAMED_MD.get(h, h) for h in old_cols}
    assert extra == (NEW_SUMMARY_MD if name == "summary.md" else set()), extra
    assert len(new) == len(old) + (name == "summary.md")  # + the memory table
    for line in prose(before):
        assert line in CHANGED_PROSE or line in prose(after), (name, line)


def test_latex_cells_are_unchanged(written):
    before, after = (p.read_text() for p in (DATA / "before" / "speedup.tex",
                                              written / "speedup.tex"))
    assert tex_rows(after) == tex_rows(before)
    assert after.count(r"\hline") == before.count(r"\hline")
    assert re.search(r"^\\begin\{tabular\}\{lr+\}$", after, flags=re.M)
