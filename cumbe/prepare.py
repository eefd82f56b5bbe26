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

:func:`prepare_cached` keeps the result beside the CSR file (``.cumbe-prep/``), keyed by
the graph's content and the sources that compute it, so that a later run of the same graph
reads it back instead of computing it (and compiling or loading the numba functions that
do).  A cache file that does not match its key or fails its checks is ignored and written
anew, never trusted.
"""

from __future__ import annotations

import functools
import hashlib
import os
import types
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from mbebench import atomic
from mbebench import envvars
from mbebench import npz_map
from mbebench import shard as sharding
from mbebench.csr import CSRGraph, verified
from mbebench.jitcache import imports_digest, keyed
from mbebench.side import candidates_on_left

# numba.prange inside _butterflies once compiled (_jit); range for the module's import
prange = range

def choose_side(graph: CSRGraph, side: str) -> bool:
    """True when the candidates (P, Q, R) come from the CSR's left side (``side`` as in
    :mod:`mbebench.side`; ``auto`` matched the faster side on every mirror dataset)."""
    return candidates_on_left(graph, side)


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
    # each task's arena words in the plain layout (cumbe.layout.needs), when known
    needs: np.ndarray | None = None  # int64
    # each task's (or piece's) estimated work (with_estimates); None: wedges + degree
    task_cost: np.ndarray | None = None  # float64
    # by task rank, for the tasks estimated so: the root's own work, then each level-0
    # branch's in the task's fixed order
    branch_cost: dict | None = None

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
    from mbebench.order import candidate_order

    order, _, start = candidate_order(offU, adjU)
    noffU, nadjU, nadjV, epos = _jit().renumber(offU, adjU, offV, order)
    orig = order.astype(np.int32)
    w_hi, w_all, dv = _jit().wedges(noffU, nadjU, offV, epos)
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
    import numba

    threads = max(1, min(numba.get_num_threads(), (1 << 26) // max(n_u, 1)))
    return _jit().butterflies(prep.offU, prep.adjU, prep.offV, prep.adjV, prep.tasks, bool(prep.rs),
                        threads)


def _butterflies(offU, adjU, offV, adjV, tasks, rs, threads):
    n = tasks.shape[0]
    out = np.zeros(n, np.int64)
    cnt = np.zeros((threads, offU.shape[0] - 1), np.int32)
    for c in prange(threads):
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


@functools.cache
def _jit() -> types.SimpleNamespace:
    """The numba functions above, compiled or loaded from numba's cache on first use:
    importing this module does not import numba, so a run that reads its preparation from
    the cache (and launches a cached cubin, :mod:`cumbe.cubin`) never does."""
    import numba

    globals()["prange"] = numba.prange
    return types.SimpleNamespace(
        renumber=keyed(numba.njit(cache=True)(_renumber)),
        wedges=keyed(numba.njit(cache=True)(_wedges)),
        butterflies=keyed(numba.njit(cache=True, parallel=True)(_butterflies)))


def task_costs(prep: Prepared) -> np.ndarray:
    """The estimated cost of every task: wedges + degree, over its pieces (what
    :func:`prepare` orders them by), or the subtree estimates of :func:`with_estimates`;
    what shards are balanced by."""
    if prep.task_cost is not None:
        return prep.task_cost
    return (prep.task_wedges + prep.task_deg) / prep.task_nk


def with_estimates(prep: Prepared) -> Prepared:
    """``prep`` (whole tasks) with each task's cost its whole subtree's estimated work
    where its local graph is small (:mod:`cumbe.estimate`: a dense one's work grows
    exponentially below the first level, which wedges do not see), largest first again.
    For the shards and the devices' queue: a single-device run keeps the wedge order."""
    if prep.tasks.size == 0 or prep.task_cost is not None or (prep.task_nk > 1).any():
        return prep
    from cumbe import estimate

    cost, branches = estimate.task_costs(prep)
    # per task: its root's own work, then its branches'
    out = replace(prep, task_cost=cost, branch_cost={
        int(prep.tasks[i]): np.concatenate([[cost[i] - b.sum()], b]) for i, b in branches.items()})
    return take(out, np.argsort(-cost, kind="stable"))


def _piece_costs(prep: Prepared, src: np.ndarray, k: np.ndarray, nk: np.ndarray) -> np.ndarray:
    """The estimated cost of each new piece (k of nk) of item ``src``: the branches it keeps
    (those with k (mod nk) candidates after them in the task's fixed order, plus the root's
    own work for piece 0) where the task's branches were estimated, else an equal share."""
    base = task_costs(prep)
    whole = base * prep.task_nk  # the whole task's cost
    out = whole[src] / nk
    if not prep.branch_cost:
        return out
    for j in range(src.size):
        rb = prep.branch_cost.get(int(prep.tasks[src[j]]))
        if rb is None:
            continue
        b = rb[1:]
        after = b.size - 1 - np.arange(b.size)
        out[j] = float(b[after % nk[j] == k[j]].sum()) + (float(rb[0]) if k[j] == 0 else 0.0)
    return out


def take(prep: Prepared, picked: np.ndarray) -> Prepared:
    """``prep`` with only the tasks at indices ``picked`` (ascending: still in cost order)."""
    return replace(prep, tasks=prep.tasks[picked], task_deg=prep.task_deg[picked],
                   task_wedges=prep.task_wedges[picked], n_higher=prep.n_higher[picked],
                   task_dv=prep.task_dv[picked], task_k=prep.task_k[picked],
                   task_nk=prep.task_nk[picked],
                   needs=None if prep.needs is None else prep.needs[picked],
                   task_cost=None if prep.task_cost is None else prep.task_cost[picked])


def split(prep: Prepared, share: float, most: int) -> Prepared:
    """``prep`` with every task that costs more than ``share`` in pieces (at most ``most``
    of it, :func:`mbebench.shard.piece_counts`), largest cost first again.  A piece (k, K)
    runs the task's level-0 nodes in a fixed order (smallest key, then vertex) but
    reports, and descends into, only the branches with k (mod K) candidates after them
    (:mod:`cumbe.kernel.search`), so the pieces of a task sum to it exactly.  Only for
    reverse scanning: noRS's explicit Q has no such rule, and its tasks stay whole."""
    if not prep.rs or most <= 1 or prep.tasks.size == 0:
        return prep
    counts = sharding.piece_counts(task_costs(prep), share, most)
    if counts.max() <= 1:
        return prep
    src, k, nk = sharding.split_pieces(prep.task_k, prep.task_nk, counts)
    out = replace(take(prep, src), task_k=k, task_nk=nk,
                  task_cost=(None if prep.task_cost is None
                             else _piece_costs(prep, src, k, nk)))
    return take(out, np.argsort(-task_costs(out), kind="stable"))


def shard_of(prep: Prepared, shard: str) -> tuple[Prepared, dict]:
    """The tasks of shard ``shard`` ("i/n", :mod:`mbebench.shard`), balanced by their
    estimated cost (:func:`with_estimates`) and in that order, largest first, a task that
    costs more than a shard's share in pieces (:func:`split`); and the row's shard stats
    (tasks: pieces).  Everything else (the renumbered graph, twins) is the whole graph's: a
    task reads all of it."""
    i, n = sharding.parse(shard)
    if n > 1:
        prep = with_estimates(prep)
        prep = split(prep, float(task_costs(prep).sum()) / n, n)
    costs = task_costs(prep)
    part = sharding.assign(costs, n)
    picked = np.flatnonzero(part == i)
    st = sharding.stats(shard, costs, picked)
    if n > 1:  # (a whole run has nothing to add up: its start-up does not hash its tasks)
        # every shard computes the whole partition: its digest tells shards of one partition
        # from those of another (an older estimate, another version) before they are added up
        h = hashlib.sha256()
        for a in (prep.tasks, prep.task_k, prep.task_nk, part):
            h.update(np.ascontiguousarray(a, dtype=np.int64).tobytes())
        st["partition"] = h.hexdigest()[:16]
    return take(prep, picked), st


# ------------------------------------------------------------------ cache beside the CSR

CACHE_DIR = ".cumbe-prep"  # beside the CSR file; hidden, so no "*.csr" pattern matches it
CACHE_ENV = "MBEBENCH_PREP_CACHE"  # "0": never read or write the cache
CACHE_FORMAT = 1
_ARRAYS = ("offU", "adjU", "offV", "adjV", "orig", "tasks", "task_deg", "task_wedges",
           "n_higher", "task_dv", "task_k", "task_nk", "needs")
_DTYPES = {"adjU": np.int32, "adjV": np.int32, "orig": np.int32, "tasks": np.int32,
           "task_k": np.int32, "task_nk": np.int32}


def _key_start(cand_left: bool, rs: bool):
    """Both keys' common part: the format, the orientation, the variant's slots and the
    sources of the preparation and of the layout, with every module they import."""
    h = hashlib.sha256(f"{CACHE_FORMAT} {int(cand_left)} {int(rs)}".encode())
    h.update(imports_digest("cumbe.prepare", "cumbe.layout").encode())
    return h


def cache_key(graph: CSRGraph, cand_left: bool, rs: bool) -> str:
    """sha256 of the graph's four CSR arrays, the orientation, the variant's slots and the
    sources of the preparation and of the layout, with every module they import (an edit
    of any is a miss; read from the files, so the key does not depend on what this process
    has imported)."""
    h = _key_start(cand_left, rs)
    for a in (graph.left_offsets, graph.left_indices, graph.right_offsets, graph.right_indices):
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(memoryview(a).cast("B"))
    return h.hexdigest()


def cache_path(graph: CSRGraph, cand_left: bool, rs: bool) -> Path:
    csr = Path(graph.path)
    return csr.parent / CACHE_DIR / f"{csr.name}.{'left' if cand_left else 'right'}." \
                                    f"{'rs' if rs else 'nors'}.npz"


def file_key(graph: CSRGraph, cand_left: bool, rs: bool) -> str | None:
    """A key for :func:`cache_key`'s entry without hashing the graph (0.3-0.5 s for 10 M
    edges): when the graph's four arrays are its CSR file mapped (:func:`read_csr`), that
    file's identity (real path, size, modification time, inode, the header's checksum of the
    payload) names its bytes as the content's hash does, as long as the file is not
    rewritten in place with its time kept.  An entry is only ever written from a graph whose
    payload was checked (:func:`prepare_cached`), so a hit needs no check of the file: the
    run uses the entry's arrays, none of the file's.  None for any other graph."""
    from mbebench.csr import identity

    arrays = (graph.left_offsets, graph.left_indices, graph.right_offsets, graph.right_indices)
    try:
        real = os.path.realpath(graph.path)
        if not all(isinstance(a, np.memmap) and a.filename
                   and os.path.realpath(a.filename) == real for a in arrays):
            return None
        st = os.stat(real)
        header = identity(real)
    except (OSError, TypeError):
        return None
    if header is None:
        return None
    h = _key_start(cand_left, rs)
    h.update(f"{real}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}|{st.st_dev}|{header}".encode())
    return h.hexdigest()


def prepare_cached(graph: CSRGraph, side: str = "auto", rs: bool = True) -> Prepared:
    """:func:`prepare` with the plain-layout needs, read from the cache beside the graph's
    CSR file when it holds this graph's preparation, else computed and stored there (a
    graph without a file, ``MBEBENCH_PREP_CACHE=0`` or a folder that cannot be written: no
    cache).  The entry is found by the file's identity (:func:`file_key`) where it can be,
    else by the content's hash (:func:`cache_key`), and then records the identity too."""
    if (not graph.path or (envvars.get(CACHE_ENV) or "1").strip() == "0"
            or not Path(graph.path).is_file()):  # (a graph in memory that names a file)
        return prepare(verified(graph), side, rs)
    cand_left = choose_side(graph, side)
    path = cache_path(graph, cand_left, rs)
    fast = file_key(graph, cand_left, rs)
    prep = None if fast is None else load_cached(path, fast, graph, cand_left, rs, "file_key")
    if prep is not None:  # made from this file when read_csr had checked it
        return prep
    graph = verified(graph)  # read unchecked (python -m cumbe run): checked before its use
    key = cache_key(graph, cand_left, rs)
    prep = load_cached(path, key, graph, cand_left, rs)
    if prep is not None and fast is None:
        return prep
    if prep is None:
        from cumbe import layout

        prep = prepare(graph, side, rs)
        prep.needs = layout.needs(prep.task_deg, prep.task_wedges, prep.n_higher, prep.task_dv,
                                  rs)
    try:  # a new entry, or one found by its content that now records the file's identity
        with atomic.atomic_path(path) as tmp, open(tmp, "wb") as f:
            np.savez(f, key=np.array(key), file_key=np.array(fast or ""), cand_left=cand_left,
                     rs=rs, n_twins=prep.n_twins, **{a: getattr(prep, a) for a in _ARRAYS})
    except OSError:  # a read-only folder or a full disk: the run goes on uncached
        pass
    return prep


def load_cached(path: Path, key: str, graph: CSRGraph, cand_left: bool,
                rs: bool, field: str = "key") -> Prepared | None:
    """The preparation in ``path`` if it is intact, made for ``key`` (its ``field``: the
    content's key, or the file's) and shaped for ``graph``; None otherwise (missing, stale,
    truncated or corrupt: every member's CRC is checked).  The arrays are mapped from the
    file, copy-on-write (:mod:`mbebench.npz_map`)."""
    z = npz_map.load(path)
    if z is None:
        return None
    try:
        if (str(z[field][()]) != key or bool(z["cand_left"][()]) != cand_left
                or bool(z["rs"][()]) != rs):
            return None
        arrays = {a: z[a] for a in _ARRAYS}
        n_twins = int(z["n_twins"][()])
    except (KeyError, ValueError, TypeError, IndexError):
        return None
    n_u, n_v = (graph.n_left, graph.n_right) if cand_left else (graph.n_right, graph.n_left)
    tasks = arrays["tasks"]
    shapes = {"offU": (n_u + 1,), "adjU": (graph.n_edges,), "offV": (n_v + 1,),
              "adjV": (graph.n_edges,), "orig": (n_u,)}
    for name, a in arrays.items():
        if (a.shape != shapes.get(name, tasks.shape)
                or a.dtype != np.dtype(_DTYPES.get(name, np.int64))):
            return None
    if tasks.size and not (0 <= int(tasks.min()) and int(tasks.max()) < n_u):
        return None
    names = {f.name for f in fields(Prepared)}
    return Prepared(**{k: v for k, v in arrays.items() if k in names}, cand_left=cand_left,
                    n_twins=n_twins, rs=rs)
