"""Cell formats, and the Markdown and LaTeX writers (pandas: ``DataFrame.to_markdown``
through tabulate, ``Styler.to_latex``).  Tables build a frame of display strings; this
module only renders it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

MISMATCH = "MISMATCH"
MD_CELL_MAX = 70  # longer texts (error messages) are cut: the CSV keeps them whole


def missing(x: Any) -> bool:
    return x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x))


def is_num(x: Any) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)
            and not (isinstance(x, float) and math.isnan(x)))


def seconds(x: Any) -> str:
    if not is_num(x):
        return "–" if isinstance(x, float) or x is pd.NA else "" if x is None else str(x)
    x = float(x)
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    if x >= 0.01 or x == 0:
        return f"{x:.3f}"
    return f"{x:.1e}"


def speedup(x: Any) -> str:
    return f"{x:.2f}×" if is_num(x) else "–"


def ratio(x: Any) -> str:
    return f"{x:.2f}" if is_num(x) else "–"


def density(x: Any) -> str:
    return f"{x:.2e}" if is_num(x) else "–"


def integer(x: Any) -> str:
    if missing(x):
        return "–"
    try:
        return f"{int(x):,}"
    except (TypeError, ValueError):
        return str(x)


def size_bytes(x: Any) -> str:
    """Bytes with a binary unit: 2.0 KiB, 196 MiB, 1.3 GiB."""
    if not is_num(x):
        return "–"
    x = float(x)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if x >= scale:
            v = x / scale
            return f"{v:.1f} {unit}" if v < 10 else f"{v:,.0f} {unit}"
    return f"{x:.0f} B"


def int_column(df: pd.DataFrame, col: str) -> None:
    """Whole numbers stay whole in the CSV (9, not 9.0); a column holding text (a
    mismatch's "3 / 4") stays as it is."""
    vals = [v for v in df[col] if not missing(v)]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()
           for v in vals):
        df[col] = pd.array([None if missing(v) else int(v) for v in df[col]], dtype="Int64")


def agree_text(agree: Any) -> str:
    if agree is True:
        return "yes"
    if agree is False:
        return f"**{MISMATCH}**"
    return "no ok run"


# --------------------------------------------------------------------------- Markdown


def _md_cell(text: Any) -> str:
    s = " ".join(("" if text is None else str(text)).split())
    if len(s) > MD_CELL_MAX:
        s = s[: MD_CELL_MAX - 1] + "…"
    return s.replace("|", "\\|")  # a pipe in a message cannot break the table


def markdown(header: Sequence[str], body: Sequence[Sequence[Any]], right: set[int]) -> str:
    """A GitHub-flavoured pipe table of display strings (tabulate does not parse numbers
    back out of them), columns in ``right`` right-aligned."""
    frame = pd.DataFrame([[_md_cell(c) for c in row] for row in body],
                         columns=[_md_cell(h) for h in header])
    align = ["right" if i in right else "left" for i in range(len(header))]
    empty = not len(frame)
    if empty:  # tabulate draws no alignment row for an empty table: draw one blank row
        frame = pd.DataFrame([[""] * len(header)], columns=frame.columns)
    lines = frame.to_markdown(index=False, tablefmt="pipe", colalign=align,
                              disable_numparse=True).splitlines()
    return "\n".join(lines[:2] if empty else lines) + "\n"


# --------------------------------------------------------------------------- LaTeX

# what pandas' latex escaping leaves to the font encoding
_TEX_AFTER = {"×": r"$\times$", "–": "--", "…": r"\ldots{}", "<": r"\textless{}",
              ">": r"\textgreater{}", "|": r"\textbar{}", "†": r"\dag{}", "‡": r"\ddag{}"}


def latex(header: Sequence[str], body: Sequence[Sequence[Any]], *, comment: str,
          footer: Sequence[str] = (), bold: Sequence[int] = (), total: bool = False) -> str:
    """A plain ``tabular`` (\\hline rules, no booktabs) for ``\\input``, through
    ``Styler.to_latex``.  ``header`` is LaTeX already; body and footer cells are text,
    escaped here.  ``bold``: body rows whose first cell is set in bold; ``footer``:
    whole-width lines after the last rule; ``total``: the last body row is a total,
    ruled off from the others."""
    width = len(header)
    flat = tex_escape([c for row in body for c in row] + list(footer))
    cells = [flat[i * width:(i + 1) * width] for i in range(len(body))]
    for i in bold:
        cells[i][0] = rf"\textbf{{{cells[i][0]}}}"
    styler = pd.DataFrame(cells, columns=pd.Index(header)).style.hide(axis="index")
    styler.set_table_styles([{"selector": rule, "props": ":hline;"}
                             for rule in ("toprule", "midrule", "bottomrule")])
    lines = styler.to_latex(column_format="l" + "r" * (width - 1)).rstrip("\n").splitlines()
    end = lines.pop()  # \end{tabular}
    if total and body:
        lines.insert(len(lines) - 2, r"\hline")  # before the total, above the bottom rule
    lines += [rf"\multicolumn{{{width}}}{{l}}{{{t}}} \\" for t in flat[len(body) * width:]]
    return "\n".join([f"% {comment}", *lines, end]) + "\n"


def tex_escape(texts: Sequence[Any]) -> list[str]:
    """Text as LaTeX: pandas' escaping (``Styler.format(escape="latex")``), then the
    characters it leaves to the font encoding."""
    if not texts:
        return []
    frame = pd.DataFrame({"t": [" ".join(("" if t is None else str(t)).split()) for t in texts]})
    styler = frame.style.format(escape="latex").hide(axis="index").hide(axis="columns")
    rows = styler.to_latex().splitlines()[1:-1]  # inside \begin{tabular}...\end{tabular}
    return ["".join(_TEX_AFTER.get(ch, ch) for ch in r.removesuffix(" \\\\").strip())
            for r in rows]
