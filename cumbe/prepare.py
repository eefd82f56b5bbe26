"""Host-side preparation of a cuMBE run: orientation, rank order, tasks, bounds.

Everything here is O(|E|) (plus one sort by degree) and runs once per graph:

* candidates U are renumbered by rank = (degree, id), so that "higher rank" is
  "larger id" on the device and every list of the other side V, sorted by the
  new ids, holds v's higher-ranked 2-hop neighbours in one contiguous run;
* a candidate with the same neighbourhood as a lower-ranked one (a twin) starts
  no first-level task: every closed set containing it contains the twin, whose
  task finds it (ParMBE's "killed" rule; no lower-rank scan on the device);
* per task: degree ``d``, wedges ``W`` (2-hop paths to the slots the task will
  hold), and from them the arena words it needs (:mod:`cumbe.layout`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from mbebench.csr import CSRGraph
from mbebench.fingerprint import mix_nb

SIDES = ("auto", "smaller", "left", "right")


def choose_side(graph: CSRGraph, side: str) -> bool:
    """True when the candidates (P, Q, R) come from the CSR's left side."""
    if side == "auto":
        # the side with the larger sum of squared degrees: the other side's lists,
        # which every L' construction and maximality check reads, are then the short
        # ones (matched the faster side on every mirror dataset, docs/gpu.md)
        dl = np.diff(np.asarray(graph.left_offsets)).astype(np.float64)
        dr = np.diff(np.asarray(graph.right_offsets)).astype(np.float64)
        return float(np.dot(dl, dl)) >= float(np.dot(dr, dr))
    if side == "smaller":  # the paper's rule
        return graph.n_left <= graph.n_right
    if side in ("left", "right"):
        return side == "left"
    raise ValueError(f"side must be one of {', '.join(SIDES)}, not {side!r}")


@numba.njit(cache=True)
def _renumber(offU, adjU, offV):
    nU = offU.shape[0] - 1
    deg = offU[1:] - offU[:-1]
    # rank = (degree, id): a counting sort by degree, ids in order within a degree
    maxd = 0
    for u in range(nU):
        if deg[u] > maxd:
            maxd = deg[u]
    start = np.zeros(maxd + 2, np.int64)
    for u in range(nU):
        start[deg[u] + 1] += 1
    for i in range(maxd + 1):
        start[i + 1] += start[i]
    order = np.empty(nU, np.int64)
    for u in range(nU):
        order[start[deg[u]]] = u
        start[deg[u]] += 1
    noffU = np.empty(nU + 1, np.int64)
    noffU[0] = 0
    for r in range(nU):
        noffU[r + 1] = noffU[r] + deg[order[r]]
    m = noffU[nU]
    nadjU = np.empty(m, np.int32)
    nadjV = np.empty(m, np.int32)
    epos = np.empty(m, np.int64)  # position of the edge's U end in the V list
    fill = offV[:-1].copy()
    for r in range(nU):
        u = order[r]
        s = offU[u]
        t = noffU[r]
        for i in range(deg[u]):
            y = adjU[s + i]
            nadjU[t + i] = y
            # rows filled in rank order: every V list comes out sorted by new id
            nadjV[fill[y]] = r
            epos[t + i] = fill[y] - offV[y]
            fill[y] += 1
    return noffU, nadjU, nadjV, epos, order.astype(np.int32)


@numba.njit(cache=True)
def _wedges(noffU, nadjU, offV, epos):
    """Per candidate: wedges to higher-ranked 2-hop vertices, the length of all its
    neighbours' lists (the runs :func:`cumbe.kernel` reads to build a task's slots), and
    the longest of those lists."""
    nU = noffU.shape[0] - 1
    w_hi = np.zeros(nU, np.int64)
    w_all = np.zeros(nU, np.int64)
    dv = np.zeros(nU, np.int64)
    for r in range(nU):
        a = 0
        b = 0
        m = 0
        for e in range(noffU[r], noffU[r + 1]):
            y = nadjU[e]
            dy = offV[y + 1] - offV[y]
            a += dy - epos[e] - 1
            b += dy  # noRS reads whole lists (v itself is skipped as it is read)
            if dy > m:
                m = dy
        w_hi[r] = a
        w_all[r] = b
        dv[r] = m
    return w_hi, w_all, dv


@numba.njit(cache=True)
def _dominated(noffU, nadjU):
    """True for a candidate whose neighbourhood equals a lower-ranked one's."""
    nU = noffU.shape[0] - 1
    h = np.empty(nU, np.uint64)
    for r in range(nU):
        s = np.uint64(noffU[r + 1] - noffU[r])
        for e in range(noffU[r], noffU[r + 1]):
            s += mix_nb(np.uint64(nadjU[e]) + np.uint64(0x632BE59BD9B4E019))
        h[r] = s
    out = np.zeros(nU, np.bool_)
    r0 = 0
    while r0 < nU:
        # equal degrees form a run of consecutive ranks
        d0 = noffU[r0 + 1] - noffU[r0]
        r1 = r0 + 1
        while r1 < nU and noffU[r1 + 1] - noffU[r1] == d0:
            r1 += 1
        if d0 > 0 and r1 - r0 > 1:
            idx = np.arange(r0, r1)
            by = idx[np.argsort(h[r0:r1], kind="mergesort")]  # stable: rank order kept
            i = 0
            n = r1 - r0
            while i < n:
                j = i + 1
                while j < n and h[by[j]] == h[by[i]]:
                    j += 1
                for a in range(i + 1, j):
                    va = by[a]
                    for b in range(i, a):
                        vb = by[b]
                        if out[vb]:
                            continue
                        same = True
                        oa = noffU[va]
                        ob = noffU[vb]
                        for t in range(d0):
                            if nadjU[oa + t] != nadjU[ob + t]:
                                same = False
                                break
                        if same:
                            out[va] = True
                            break
                i = j
        r0 = r1
    return out


@dataclass
class Prepared:
    """The oriented, renumbered graph and the first-level tasks."""

    offU: np.ndarray  # int64, candidates in rank order
    adjU: np.ndarray  # int32, other-side ids
    offV: np.ndarray  # int64
    adjV: np.ndarray  # int32, candidate ranks, sorted
    orig: np.ndarray  # int32, rank -> candidate id in the CSR
    cand_left: bool
    tasks: np.ndarray  # int32 ranks, largest work first
    task_deg: np.ndarray  # int64
    task_wedges: np.ndarray  # int64, the wedges the task's slots are built from
    n_higher: np.ndarray  # int64, candidates of higher rank (bounds the slots)
    task_dv: np.ndarray  # int64, the longest neighbour list among the task's neighbours
    n_twins: int

    @property
    def n_u(self) -> int:
        return self.offU.shape[0] - 1

    @property
    def n_v(self) -> int:
        return self.offV.shape[0] - 1


def prepare(graph: CSRGraph, side: str = "auto", rs: bool = True) -> Prepared:
    """Orient, renumber and list the tasks; ``rs=False`` (noRS) builds slots for the
    whole 2-hop neighbourhood, since its Q is scanned explicitly."""
    cand_left = choose_side(graph, side)
    if cand_left:
        offU, adjU, offV = graph.left_offsets, graph.left_indices, graph.right_offsets
    else:
        offU, adjU, offV = graph.right_offsets, graph.right_indices, graph.left_offsets
    offU = np.ascontiguousarray(offU, dtype=np.int64)
    adjU = np.ascontiguousarray(adjU, dtype=np.int32)
    offV = np.ascontiguousarray(offV, dtype=np.int64)
    noffU, nadjU, nadjV, epos, orig = _renumber(offU, adjU, offV)
    w_hi, w_all, dv = _wedges(noffU, nadjU, offV, epos)
    dom = _dominated(noffU, nadjU)
    deg = noffU[1:] - noffU[:-1]
    n_u = deg.shape[0]
    cand = np.nonzero((deg > 0) & ~dom)[0]
    wedges = (w_hi if rs else w_all)[cand]
    # largest work first: the long subtrees start early, the small ones fill in
    order = np.argsort(-(wedges + deg[cand]), kind="stable")
    tasks = cand[order].astype(np.int32)
    n_higher = (n_u - 1 - tasks).astype(np.int64) if rs else np.full(tasks.size, max(n_u - 1, 0),
                                                                      np.int64)
    return Prepared(noffU, nadjU, offV, nadjV, orig, cand_left, tasks, deg[tasks].astype(np.int64),
                    wedges[order].astype(np.int64), n_higher, dv[tasks].astype(np.int64),
                    int(dom[deg > 0].sum()))
