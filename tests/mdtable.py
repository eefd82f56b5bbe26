"""Read the report's Markdown tables back as cells (tabulate pads them with spaces)."""

from __future__ import annotations

import re


def tables(text: str) -> list[list[list[str]]]:
    """Every pipe table of a Markdown text as rows of stripped cells (alignment row dropped)."""
    out, cur = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                cur.append(cells)
        elif cur:
            out.append(cur)
            cur = []
    return out


def row(text: str, first: str, table: int = 0) -> list[str]:
    """The cells of the row whose first cell is ``first``."""
    return next(r for r in tables(text)[table] if r[0] == first)
