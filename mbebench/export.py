"""Text exports of a CSR graph, for command-line engines that cannot read the binary CSR.

``konect``: a KONECT edge list (``out.*`` format): two header lines
``% bip unweighted`` and ``% <edges> <left> <right>``, then one ``u v`` line
per edge, ids 1-based, left vertex first, sorted by (u, v).

``adj``: an adjacency list (the ``.adj`` files of GMBE / AMBEA): line ``u``
(0-based) lists the right neighbours of left vertex ``u``, 0-based, ascending,
separated by single spaces; a left vertex without neighbours is an empty line.

Both describe exactly the CSR's graph and its vertex ids, so counts compare.
"""

from __future__ import annotations

import io
import os

import numpy as np

from mbebench.atomic import atomic_path
from mbebench.csr import CSRGraph

FORMATS = ("konect", "adj")


def konect_text(graph: CSRGraph) -> str:
    deg = np.diff(np.asarray(graph.left_offsets, dtype=np.int64))
    left = np.repeat(np.arange(graph.n_left, dtype=np.int64), deg) + 1
    right = np.asarray(graph.left_indices, dtype=np.int64) + 1
    buf = io.StringIO()
    buf.write(f"% bip unweighted\n% {graph.n_edges} {graph.n_left} {graph.n_right}\n")
    if graph.n_edges:
        np.savetxt(buf, np.column_stack([left, right]), fmt="%d", delimiter=" ")
    return buf.getvalue()


def adj_text(graph: CSRGraph) -> str:
    off = np.asarray(graph.left_offsets, dtype=np.int64)
    idx = np.asarray(graph.left_indices)
    return "".join(
        " ".join(map(str, idx[off[u] : off[u + 1]].tolist())) + "\n" for u in range(graph.n_left)
    )


def write(graph: CSRGraph, fmt: str, out: str | os.PathLike) -> None:
    """Write ``graph`` as ``fmt`` (one of FORMATS) to ``out``, atomically."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r} (known: {', '.join(FORMATS)})")
    text = konect_text(graph) if fmt == "konect" else adj_text(graph)
    with atomic_path(out) as tmp:
        tmp.write_text(text)
