"""The graph files the published codes read, written from the CSR with its vertex ids.

``adj`` (AdaMBE, ooMBEA, GMBE): line ``u`` lists the right neighbours of left vertex ``u``
(:func:`mbebench.export.adj_text`).  ``bi`` (the original cuMBE, its ``data/gen_bi.cpp``
format): ``<|R|> <|L|> <|E|>``, a blank line, one ``<start> <length>`` line per vertex of
its R side, then one ``<neighbour> 1`` line per edge; its R side is our left side (the first
column of a KONECT file, as gen_bi reads it).
"""

from __future__ import annotations

import io
import os

import numpy as np

from mbebench import export
from mbebench.csr import CSRGraph
from mbebench.export import adj_text

FORMATS = ("adj", "bi")


def bi_text(graph: CSRGraph) -> str:
    off = np.asarray(graph.left_offsets, dtype=np.int64)
    buf = io.StringIO()
    buf.write(f"{graph.n_left} {graph.n_right} {graph.n_edges}\n\n")
    if graph.n_left:
        np.savetxt(buf, np.column_stack([off[:-1], np.diff(off)]), fmt="%d", delimiter=" ")
    for v in np.asarray(graph.left_indices, dtype=np.int64).tolist():
        buf.write(f"\n{v} 1")
    buf.write("\n")
    return buf.getvalue()


TEXTS = {"adj": adj_text, "bi": bi_text}


def write(graph: CSRGraph, fmt: str, out: str | os.PathLike) -> None:
    export.write(graph, fmt, out, TEXTS, "input")
