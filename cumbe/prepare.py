"""Host-side preparation of a cuMBE run: orientation, rank order, tasks, bounds.

Everything here is O(|E|) (plus one sort by degree) and runs once per graph:

* candidates U are renumbered by rank = (degree, id), so that "higher rank" is
  "larger id" on the device and every list of the other side V, sorted by the
  new ids, holds v's higher-ranked 2-hop neighbours in one contiguous run;
* a candidate with the same neighbourhood as a lower-ranked one (a twin) starts
  no first-level task (:func:`mbebench.order.candidate_order`, shared with iMBEA):
  this is ParMBE's "killed" rule, so the device never scans lower-ranked vertices;
* per task: degree ``d``, wedges ``W`` (2-hop paths to the slots the task will
  hold), and from them the arena words it needs (:mod:`cumbe.layout`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numba
import numpy as np

from mbebench import shard as SH
from mbebench.csr import CSRGraph
from mbebench.order import candidate_order
from mbebench.jitcache import keyed

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


@keyed
@numba.njit(cache=True)
def _renumber(offU, adjU, offV, order):
    """The candidate side's CSR in rank order, the other side's lists in ranks, and the
    position of each edge's candidate end in the other side's list."""
    nU = offU.shape[0] - 1
    deg = offU[1:] - offU[:-1]
    noffU = np.empty(nU + 1, np.int64)
    noffU[0] = 0
    for r in range(nU):
        noffU[r + 1] = noffU[r] + deg[order[r]]
    m = noffU[nU]
    nadjU = np.empty(m, np.int32)
    nadjV = np.empty(m, np.int32)
    epos = np.empty(m, np.int64)
    fill = offV[:-1].copy()
    for r in range(nU):
        u = order[r]
        s = offU[u]
        t = noffU[r]
        for i in range(deg[u]):
            y = adjU[s + i]
            nadjU[t + i] = y
            # rows filled in rank order: every V list comes out sorted by rank
            nadjV[fill[y]] = r
            epos[t + i] = fill[y] - offV[y]
            fill[y] += 1
    return noffU, nadjU, nadjV, epos


@keyed
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
    rs: bool = True  # prepared for reverse scanning (False: noRS's whole 2-hop slots)
    # each task's piece: k of nk (split); None: every task whole (0 of 1)
    task_k: np.ndarray | None = None  # int32
    task_nk: np.ndarray | None = None  # int32

    def __post_init__(self):
        if self.task_k is None:
            self.task_k = np.zeros(self.tasks.size, np.int32)
        if self.task_nk is None:
            self.task_nk = np.ones(self.tasks.size, np.int32)

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
    order, _, start = candidate_order(offU, adjU)
    noffU, nadjU, nadjV, epos = _renumber(offU, adjU, offV, order)
    orig = order.astype(np.int32)
    w_hi, w_all, dv = _wedges(noffU, nadjU, offV, epos)
    deg = noffU[1:] - noffU[:-1]
    n_u = deg.shape[0]
    starts = start[order]  # by rank
    cand = np.nonzero(starts)[0]
    wedges = (w_hi if rs else w_all)[cand]
    # largest work first: the long subtrees start early, the small ones fill in
    order = np.argsort(-(wedges + deg[cand]), kind="stable")
    tasks = cand[order].astype(np.int32)
    n_higher = (n_u - 1 - tasks).astype(np.int64) if rs else np.full(tasks.size, max(n_u - 1, 0),
                                                                      np.int64)
    return Prepared(noffU, nadjU, offV, nadjV, orig, cand_left, tasks, deg[tasks].astype(np.int64),
                    wedges[order].astype(np.int64), n_higher, dv[tasks].astype(np.int64),
                    int(np.count_nonzero(deg > 0) - cand.size), bool(rs))


def task_butterflies(prep: Prepared) -> np.ndarray:
    """Per task: the butterflies (2 x 2 bicliques) through its vertex v whose other
    candidate is one of its slots, i.e. the sum over the slots u of C(|N(u) ∩ N(v)|, 2).
    A slot whose list has one element leads to no biclique with two of v's neighbours, so
    this follows the search under a task where its wedges do not (a hub's task has many
    wedges and may have few butterflies); :mod:`cumbe.grid` weighs the block-wide tasks'
    share of it.  O(wedges), on every host core; the grid planner asks for it only when
    memory is short."""
    n_u = prep.offU.shape[0] - 1
    # one counter per candidate and thread, at most 256 MB of them
    threads = max(1, min(numba.get_num_threads(), (1 << 26) // max(n_u, 1)))
    return _butterflies(prep.offU, prep.adjU, prep.offV, prep.adjV, prep.tasks, bool(prep.rs),
                        threads)


@keyed
@numba.njit(cache=True, parallel=True)
def _butterflies(offU, adjU, offV, adjV, tasks, rs, threads):
    n = tasks.shape[0]
    out = np.zeros(n, np.int64)
    cnt = np.zeros((threads, offU.shape[0] - 1), np.int32)
    for c in numba.prange(threads):
        for i in range(c, n, threads):
            v = tasks[i]
            for e in range(offU[v], offU[v + 1]):
                x = adjU[e]
                for f in range(offV[x], offV[x + 1]):
                    u = adjV[f]
                    if u > v or (not rs and u != v):
                        cnt[c, u] += 1
            p = 0
            for e in range(offU[v], offU[v + 1]):
                x = adjU[e]
                for f in range(offV[x], offV[x + 1]):
                    u = adjV[f]
                    k = cnt[c, u]
                    if k > 0:
                        p += k * (k - 1) // 2
                        cnt[c, u] = 0
            out[i] = p
    return out


def task_costs(prep: Prepared) -> np.ndarray:
    """The estimated cost of every task (wedges + degree, over its pieces): what
    :func:`prepare` orders them by and what shards are balanced by."""
    return (prep.task_wedges + prep.task_deg) / prep.task_nk


def take(prep: Prepared, picked: np.ndarray) -> Prepared:
    """``prep`` with only the tasks at indices ``picked`` (ascending: still in cost order)."""
    return replace(prep, tasks=prep.tasks[picked], task_deg=prep.task_deg[picked],
                   task_wedges=prep.task_wedges[picked], n_higher=prep.n_higher[picked],
                   task_dv=prep.task_dv[picked], task_k=prep.task_k[picked],
                   task_nk=prep.task_nk[picked])


def split(prep: Prepared, share: float, most: int) -> Prepared:
    """``prep`` with every task that costs more than ``share`` in pieces (at most ``most``
    of it, :func:`mbebench.shard.piece_counts`), largest cost first again.  A piece (k, K)
    runs the task's level-0 nodes in a fixed order (smallest key, then vertex) but
    reports, and descends into, only the branches with k (mod K) candidates after them
    (:mod:`cumbe.kernel.search`), so the pieces of a task sum to it exactly.  Only for
    reverse scanning: noRS's explicit Q has no such rule, and its tasks stay whole."""
    if not prep.rs or most <= 1 or prep.tasks.size == 0:
        return prep
    counts = SH.piece_counts(task_costs(prep), share, most)
    if counts.max() <= 1:
        return prep
    src, k, nk = SH.split_pieces(prep.task_k, prep.task_nk, counts)
    out = replace(take(prep, src), task_k=k, task_nk=nk)
    return take(out, np.argsort(-task_costs(out), kind="stable"))


def shard_of(prep: Prepared, shard: str) -> tuple[Prepared, dict]:
    """The tasks of shard ``shard`` ("i/n", :mod:`mbebench.shard`), balanced by the cost
    :func:`prepare` orders them by (wedges + degree), still in that order, a task that
    costs more than a shard's share in pieces (:func:`split`); and the row's shard stats
    (tasks: pieces).  Everything else (the renumbered graph, twins) is the whole graph's: a
    task reads all of it."""
    i, n = SH.parse(shard)
    if n > 1:
        prep = split(prep, float(task_costs(prep).sum()) / n, n)
    costs = task_costs(prep)
    picked = SH.select(costs, i, n)
    return take(prep, picked), SH.stats(shard, costs, picked)
