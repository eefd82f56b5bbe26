"""The ``side`` parameter, one meaning for every engine: which side of the bipartite graph
the candidates come from (the side the search branches on; ParMBE's "U").

- ``auto``: the side whose vertices have the larger sum of squared degrees.  The first
  level builds each candidate's two-hop neighbourhood by walking the other side's lists,
  so this makes those lists the short ones.  It is *not* the side with fewer vertices.
- ``smaller`` / ``larger``: the side with fewer / more vertices (``smaller`` is the
  cuMBE paper's rule; ties take the left side).
- ``left`` / ``right``: the CSR's left or right side, as the dataset's file has them.

Every engine takes all five; each keeps its own default.  Values an engine took before
(iMBEA ``auto|left|right``, ParMBE ``smaller|larger|left|right``, cuMBE
``auto|smaller|left|right``) mean what they meant.
"""

from __future__ import annotations

import numpy as np

from mbebench.spec import Param

SIDES: tuple[str, ...] = ("auto", "smaller", "larger", "left", "right")
DOC = ("Candidate side: auto (the side with the larger sum of squared degrees, not the "
       "smaller side), smaller or larger (fewer or more vertices; smaller is the paper's "
       "rule), left or right (the CSR's).")


def _squared_degrees(offsets) -> float:
    deg = np.diff(np.asarray(offsets)).astype(np.float64)
    # not np.dot: BLAS runs a dot product this long on every core, and its threads then spin
    # for a while; four GPU workers doing this for each shard slowed each other's host work
    # (set-up 0.05-0.1 s a shard on a 64-core host)
    return float(np.square(deg).sum())


def candidates_on_left(graph, side: str) -> bool:
    """True when ``side`` puts the candidates on ``graph``'s (a CSRGraph's) left side."""
    if side == "auto":
        return _squared_degrees(graph.left_offsets) >= _squared_degrees(graph.right_offsets)
    if side == "smaller":
        return graph.n_left <= graph.n_right
    if side == "larger":
        return graph.n_left >= graph.n_right
    if side in ("left", "right"):
        return side == "left"
    raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}")


def side_param(default: str) -> Param:
    """The ``side`` parameter of an engine's spec, with the engine's own default."""
    return Param("side", str, default, choices=SIDES, doc=DOC)
