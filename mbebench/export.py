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


TEXTS = {"konect": konect_text, "adj": adj_text}


def write(graph: CSRGraph, fmt: str, out: str | os.PathLike, texts=None,
          what: str = "export") -> None:
    """Write ``graph`` as ``fmt`` to ``out``, atomically; ``texts``: format -> text maker
    (default :data:`TEXTS`, one per FORMATS), ``what`` names the formats in the error."""
    texts = TEXTS if texts is None else texts
    if fmt not in texts:
        raise ValueError(f"unknown {what} format {fmt!r} (known: {', '.join(texts)})")
    with atomic_path(out) as tmp:
        tmp.write_text(texts[fmt](graph))
