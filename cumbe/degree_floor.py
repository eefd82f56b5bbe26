"""The maximality check's degree floor: a vertex with fewer than |L'| neighbours contains no
L', so the check leaves the shortest list's vertices of lower degree out before it looks any
up in the other lists (the rounds build; the paper's check reads the whole list).

Candidates are numbered by rank = (degree, id), so those vertices are a prefix of every
sorted list, and one table says where it ends: ``prm[P_DEGT + d]`` is the first rank of
degree ``d`` or more, ``d = 0..DEGT``.  A larger |L'| uses ``d = DEGT``: a lower floor, never
a wrong one.  ParMBE's counters model it as ``degcut`` (benchmarks/cpu/work_analysis.py)."""

from __future__ import annotations

import numpy as np

from cumbe.consts import DEGT, NPARAMS, P_DEGT


def params(offU: np.ndarray) -> np.ndarray:
    """The kernel's ``prm`` array, zero but for the floor's table (``offU``: the candidates'
    offsets in rank order, so that their degrees never decrease)."""
    deg = np.diff(offU)
    if deg.size > 1 and np.any(deg[1:] < deg[:-1]):
        raise ValueError("degree floor: the candidates are not in degree order")
    prm = np.zeros(NPARAMS, np.int64)
    prm[P_DEGT:] = np.searchsorted(deg, np.arange(DEGT + 1), side="left")
    return prm
