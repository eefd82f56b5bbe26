"""Synthetic stand-ins for the paper's large datasets that cannot be downloaded here.

    python benchmarks/standins.py --list
    python benchmarks/standins.py --preset BookCrossing --seed 1 --scale 1.0 --out DIR
    python benchmarks/standins.py --all [--seeds 1,2,3] [--scale 0.05] --out DIR
    python benchmarks/standins.py --crown 33 --out DIR    # S_33: 2**33 - 2 bicliques

Each graph is written as ``DIR/<preset>-s<seed>-x<scale>.csr`` (through
:func:`mbebench.csr.write_csr`) with a JSON sidecar ``.json`` beside it holding the
generator parameters and the realised sizes.  Importable: ``generate(params)``
returns ``(CSRGraph, info)``; ``preset_params(name, seed, scale)`` builds the
parameters of a preset.

Model (bipartite Chung-Lu):

* Per side, the vertex of weight rank i (1-based) gets the weight
  w_i = i^(-1/(exponent-1)), the expected-degree sequence of a power law with
  that exponent.  The weights are scaled by one factor s per side so that
  sum_i min(s * w_i, cap) = |E| (water-filling: the capped vertices are a
  prefix); e_i = min(s * w_i, cap) is the expected degree.
* Edges are drawn by picking both endpoints independently in proportion to e
  (multinomial endpoint counts per side, paired by a random permutation:
  the same law as independent draws), in rounds: duplicates are dropped, then
  the degree caps are enforced exactly (a vertex above its cap loses random
  Chung-Lu edges until it is at the cap; planted-block edges are dropped only
  if the block edges alone exceed the cap), and the next round draws the
  deficit.  The last round's surplus is removed at random, so the graph has
  exactly |E| edges unless the caps make that impossible (the sidecar says).
  Duplicates fall mostly on hub-hub pairs, so a hub's realised degree is
  somewhat below its expected degree; the rounds restore the edge count, not
  each vertex's degree.
* Vertex ids are a random permutation of the weight ranks on each side (ids in
  real datasets do not follow degree, and the engines break degree ties by id).
* Isolated vertices are *kept* by default: the CSR has exactly the preset's
  |U| and |V| (``drop_isolated=True`` renumbers the non-isolated vertices
  instead).  A power law with average degree ~2-10 leaves a good share of the
  low-weight vertices without edges (the sidecar reports how many); they cost
  the engines nothing but O(|U| + |V|) array space.

Planted blocks (optional): B blocks, each a_i left x b_i right vertices (sizes
uniform in the given ranges), each block edge present with probability p_i
(uniform in a range).  Block members are drawn from a pool of ``pool_left`` /
``pool_right`` vertices per side, chosen once with probability proportional to
the expected degree (hub-ish, not only the very top ones), so blocks share
vertices and large maximal bicliques overlap, as in real graphs.  Block edges
are placed first and count towards |E|; the Chung-Lu rounds fill the rest.

``scale`` multiplies |U|, |V|, |E|, the block count and the pool sizes (at
least 1 block, pools at least 2x the largest block side); block shapes are
local structure and are not scaled.  Degree caps follow ``cap_scaling``:
``natural`` (default) multiplies each cap by scale^(1/(exponent-1)), the factor
by which the uncapped power law's largest expected degree shrinks at a fixed
average degree, so the cap clips the top of the distribution at the same
relative height; ``linear`` multiplies by scale; ``none`` keeps the caps.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from mbebench.atomic import write_json  # noqa: E402
from mbebench.csr import INDEX_DTYPE, OFFSET_DTYPE, CSRGraph, write_csr  # noqa: E402

# (re-exported: ``import standins`` is the stand-ins' one entry point)
from benchmarks.standin_presets import (  # noqa: E402, F401
    CAP_SCALINGS, DATASETS, HARD_BLOCKS, VARIANTS, Blocks, Params, preset_names, preset_params)

MAX_ROUNDS = 40


# --------------------------------------------------------------------------
# the generator


def expected_degrees(n: int, exponent: float, n_edges: int, cap: int) -> np.ndarray:
    """e_i = min(s * i^(-1/(exponent-1)), cap), i = 1..n, with sum(e) = n_edges
    (float64, descending)."""
    if exponent <= 1.0:
        raise ValueError("the power-law exponent must be > 1")
    if n * cap < n_edges:
        raise ValueError(f"{n} vertices with degree cap {cap} cannot hold {n_edges} edges")
    w = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0))
    # With the first k vertices at the cap, s_k = (m - k cap) / sum(w[k:]); the
    # answer is the smallest k whose s_k leaves w[k] at or below the cap.
    suffix = np.cumsum(w[::-1])[::-1]
    k = np.arange(n, dtype=np.float64)
    s = (n_edges - k * cap) / suffix
    ok = s * w <= cap * (1 + 1e-12)
    k0 = int(np.argmax(ok))
    e = np.minimum(s[k0] * w, float(cap))
    e[:k0] = cap
    return e


def _draw(pl: np.ndarray, pr: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k Chung-Lu pairs as keys l * n_right + r: how often each vertex is an
    endpoint is multinomial in its probability, and the right endpoints are
    paired with the left ones by a random permutation (the same law as k
    independent draws per side, without k random binary searches)."""
    nl, nr = pl.size, pr.size
    left = np.repeat(np.arange(nl, dtype=np.int64), rng.multinomial(k, pl))
    right = rng.permutation(np.repeat(np.arange(nr, dtype=np.int64), rng.multinomial(k, pr)))
    return left * nr + right


def _sorted_unique(a: np.ndarray) -> np.ndarray:
    # np.unique hashes int64 in numpy 2.4 (14 s on DBLP's 12 M keys); a sort is ~1 s
    a = np.sort(a)
    if a.size:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a


def _over_cap(src: np.ndarray, n: int, cap: int, is_block: np.ndarray, rng) -> np.ndarray:
    """Indices of edges to drop so that no vertex of ``src`` has more than
    ``cap``: random Chung-Lu edges first, block edges only if they alone exceed it."""
    deg = np.bincount(src, minlength=n)
    over = deg > cap
    if not over.any():
        return np.empty(0, np.int64)
    idx = np.flatnonzero(over[src])
    r = rng.random(idx.size)
    order = np.lexsort((r, ~is_block[idx], src[idx]))
    s = src[idx][order]
    rank = np.arange(s.size) - np.searchsorted(s, s, side="left")
    return idx[order[rank >= cap]]


def _blocks(p: Params, el: np.ndarray, er: np.ndarray, rng) -> tuple[np.ndarray, dict]:
    """Keys (l * n_right + r, weight-rank ids) of the planted block edges."""
    b = p.blocks
    pl = rng.choice(p.n_left, size=min(b.pool_left, p.n_left), replace=False, p=el / el.sum())
    pr = rng.choice(p.n_right, size=min(b.pool_right, p.n_right), replace=False, p=er / er.sum())
    keys = []
    sizes = []
    members_l, members_r = [], []
    for _ in range(b.count):
        a = min(int(rng.integers(b.left_size[0], b.left_size[1] + 1)), pl.size)
        c = min(int(rng.integers(b.right_size[0], b.right_size[1] + 1)), pr.size)
        q = float(rng.uniform(b.p[0], b.p[1]))
        A = rng.choice(pl, size=a, replace=False)
        B = rng.choice(pr, size=c, replace=False)
        members_l.append(A)
        members_r.append(B)
        m = rng.random((a, c)) < q
        ia, ib = np.nonzero(m)
        keys.append(A[ia].astype(np.int64) * p.n_right + B[ib])
        sizes.append((a, c, round(q, 4)))
    k = _sorted_unique(np.concatenate(keys)) if keys else np.empty(0, np.int64)
    def shared(members):
        # share of block memberships whose vertex is in another block too
        if not members:
            return 0.0
        _, inv, cnt = np.unique(np.concatenate(members), return_inverse=True, return_counts=True)
        return round(float(np.mean(cnt[inv] > 1)), 4)

    info = {
        "count": b.count,
        "pool_left": int(pl.size),
        "pool_right": int(pr.size),
        "sizes": sizes,
        "drawn_edges": int(k.size),
        "shared_members_left": shared(members_l),
        "shared_members_right": shared(members_r),
    }
    return k, info


def generate(p: Params) -> tuple[CSRGraph, dict]:
    """The stand-in graph of ``p`` and its sidecar record (parameters + sizes)."""
    t0 = time.perf_counter()
    rng = np.random.default_rng([p.seed, 0x5EED])
    nl, nr, m = p.n_left, p.n_right, p.n_edges
    el = expected_degrees(nl, p.exponent_left, m, p.cap_left)
    er = expected_degrees(nr, p.exponent_right, m, p.cap_right)
    pl, pr = el / el.sum(), er / er.sum()

    block_info = None
    if p.blocks is not None and p.blocks.count > 0:
        bkeys, block_info = _blocks(p, el, er, rng)
        if bkeys.size > m:
            raise ValueError(f"{p.preset}: the planted blocks alone have {bkeys.size:,} edges, "
                             f"more than |E| = {m:,}; take a larger dataset or scale")
    else:
        bkeys = np.empty(0, np.int64)
    keys = bkeys
    rounds = 0
    accept = 1.0  # distinct new edges per drawn pair in the last round
    while rounds < MAX_ROUNDS:
        if bkeys.size:
            pos = np.minimum(np.searchsorted(bkeys, keys), bkeys.size - 1)
            is_block = bkeys[pos] == keys
        else:
            is_block = np.zeros(keys.size, bool)
        lsrc, rsrc = keys // nr, keys % nr
        drop = _over_cap(lsrc, nl, p.cap_left, is_block, rng)
        if drop.size:
            keep = np.ones(keys.size, bool)
            keep[drop] = False
            keys, is_block, rsrc = keys[keep], is_block[keep], rsrc[keep]
        drop = _over_cap(rsrc, nr, p.cap_right, is_block, rng)
        if drop.size:
            keep = np.ones(keys.size, bool)
            keep[drop] = False
            keys, is_block = keys[keep], is_block[keep]
        deficit = m - keys.size
        if deficit <= 0:
            if deficit < 0:
                # the last round's surplus, at random among the Chung-Lu edges
                cl = np.flatnonzero(~is_block)
                drop = rng.choice(cl, size=-deficit, replace=False)
                keep = np.ones(keys.size, bool)
                keep[drop] = False
                keys = keys[keep]
            break
        rounds += 1
        k = int(math.ceil(deficit / max(accept, 0.05) * 1.02)) + 16
        new = _draw(pl, pr, k, rng)
        before = keys.size
        keys = _sorted_unique(np.concatenate((keys, new)))
        accept = max((keys.size - before) / k, 1e-3)

    # ids: a random permutation of the weight ranks on each side
    perm_l = rng.permutation(nl)
    perm_r = rng.permutation(nr)
    left = perm_l[keys // nr]
    right = perm_r[keys % nr]
    del keys
    n_left, n_right = nl, nr
    if p.drop_isolated:
        used_l = np.zeros(nl, bool)
        used_l[left] = True
        used_r = np.zeros(nr, bool)
        used_r[right] = True
        new_l = np.cumsum(used_l) - 1
        new_r = np.cumsum(used_r) - 1
        left, right = new_l[left], new_r[right]
        n_left, n_right = int(used_l.sum()), int(used_r.sum())
    g = _csr(left, right, n_left, n_right)
    gen_s = time.perf_counter() - t0
    return g, _record(p, g, rounds, block_info, bkeys.size, gen_s)


def _csr(left: np.ndarray, right: np.ndarray, n_left: int, n_right: int) -> CSRGraph:
    """CSR of distinct edges (what mbebench.csr.from_edges builds, with one
    integer sort per side instead of its unique + two lexsorts)."""
    key = np.sort(left * n_right + right)
    li = (key % n_right).astype(INDEX_DTYPE)
    lo = np.zeros(n_left + 1, OFFSET_DTYPE)
    np.cumsum(np.bincount(key // n_right, minlength=n_left), out=lo[1:])
    key = np.sort(right * n_left + left)
    ri = (key % n_left).astype(INDEX_DTYPE)
    ro = np.zeros(n_right + 1, OFFSET_DTYPE)
    np.cumsum(np.bincount(key // n_left, minlength=n_right), out=ro[1:])
    return CSRGraph(n_left, n_right, int(li.size), lo, li, ro, ri)


def crown(n: int) -> CSRGraph:
    """The crown graph S_n: K_{n,n} minus a perfect matching (left i ~ right j iff i != j).

    Its maximal bicliques are exactly (X, {j : j not in X}) for every nonempty proper
    subset X of the left side: :func:`crown_bicliques` = 2**n - 2 of them, so a count
    above 2**32 (n >= 33) from a graph of 2n vertices checks every count path for
    32-bit truncation."""
    return crown_union(n, 1)


def crown_union(n: int, copies: int) -> CSRGraph:
    """``copies`` disjoint crowns S_n (copy c on the vertices c*n .. c*n + n - 1 of each
    side): ``copies * crown_bicliques(n)`` maximal bicliques, in first-level tasks no larger
    than one crown's."""
    if int(copies) < 1:
        raise ValueError(f"a crown union needs at least one copy, not {copies}")
    return crowns([int(n)] * int(copies))


def crowns(sizes) -> CSRGraph:
    """Disjoint crowns S_n for n in ``sizes``, in turn on both sides' vertices (one dominant
    component first: the multi-GPU benchmark's skewed graph)."""
    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) < 2:
        raise ValueError(f"every crown graph needs n >= 2, not {sizes}")
    off = np.repeat(np.cumsum([0] + sizes[:-1]), [n * (n - 1) for n in sizes]).astype(np.int64)
    i, j = (np.concatenate(x).astype(np.int64)
            for x in zip(*(np.nonzero(~np.eye(n, dtype=bool)) for n in sizes)))
    return _csr(i + off, j + off, sum(sizes), sum(sizes))


def crown_bicliques(n: int) -> int:
    """The number of maximal bicliques of :func:`crown` ``(n)``: 2**n - 2 (a Python int)."""
    return 2 ** int(n) - 2


def degree_stats(offsets: np.ndarray) -> dict:
    d = np.diff(np.asarray(offsets)).astype(np.int64)
    return {
        "max_degree": int(d.max()) if d.size else 0,
        "sum_sq_degree": int((d * d).sum()),
        "non_isolated": int(np.count_nonzero(d)),
        "mean_degree_non_isolated": round(float(d.sum() / max(1, np.count_nonzero(d))), 4),
    }


def _record(p: Params, g: CSRGraph, rounds, block_info, block_edges, gen_s) -> dict:
    params = dataclasses.asdict(p)
    params["blocks"] = dataclasses.asdict(p.blocks) if p.blocks is not None else None
    return {
        "generator": "benchmarks/standins.py (bipartite Chung-Lu + planted blocks)",
        "params": params,
        "realised": {
            "n_left": g.n_left,
            "n_right": g.n_right,
            "n_edges": g.n_edges,
            "left": degree_stats(g.left_offsets),
            "right": degree_stats(g.right_offsets),
            "rounds": rounds,
            "edges_short_of_target": int(p.n_edges - g.n_edges),
            "blocks": block_info,
            "block_edges_drawn": int(block_edges),
        },
        "generate_s": round(gen_s, 3),
    }


def file_stem(p: Params) -> str:
    return f"{p.preset}-s{p.seed}-x{p.scale:g}"


def write(p: Params, out: Path) -> tuple[Path, dict]:
    """Generate ``p`` into ``out``; returns the CSR path and the sidecar record."""
    g, rec = generate(p)
    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{file_stem(p)}.csr"
    write_csr(g, path)
    rec["write_s"] = round(time.perf_counter() - t0, 3)
    write_json(path.with_suffix(".json"), rec)
    return path, rec


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", action="append", help="preset name (repeatable)")
    ap.add_argument("--all", action="store_true", help="every preset")
    ap.add_argument("--list", action="store_true", help="list the presets and exit")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--seeds", default="1,2,3", help="seeds for --all (comma list)")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--cap-scaling", choices=CAP_SCALINGS, default="natural")
    ap.add_argument("--drop-isolated", action="store_true")
    ap.add_argument("--exponent", type=float, help="override both sides' exponent")
    ap.add_argument("--cap", type=int, help="override both sides' cap (at scale 1)")
    ap.add_argument("--blocks", type=int, help="planted blocks at scale 1 (0: none)")
    ap.add_argument("--crown", type=int, metavar="N",
                    help="write the crown graph S_N (2**N - 2 maximal bicliques) as "
                         "DIR/crown-N.csr instead")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if a.crown is not None:
        if a.out is None:
            ap.error("--crown needs --out DIR")
        a.out.mkdir(parents=True, exist_ok=True)
        path = a.out / f"crown-{a.crown}.csr"
        write_csr(crown(a.crown), path)
        print(f"{path}  S_{a.crown}: {crown_bicliques(a.crown):,} maximal bicliques")
        return 0
    if a.list:
        for name in preset_names():
            p = preset_params(name, scale=a.scale, cap_scaling=a.cap_scaling)
            b = f" blocks={p.blocks.count}" if p.blocks else ""
            print(
                f"{name:28s} |U|={p.n_left:>9,} |V|={p.n_right:>9,} |E|={p.n_edges:>11,} "
                f"exp={p.exponent_left:g}/{p.exponent_right:g} "
                f"caps={p.cap_left}/{p.cap_right}{b}"
            )
        return 0
    if a.out is None or not (a.all or a.preset):
        ap.error("give --preset NAME (or --all) and --out DIR, or --list")
    names = preset_names() if a.all else a.preset
    seeds = [a.seed] if a.seed is not None else [int(s) for s in a.seeds.split(",")]
    if not a.all and a.seed is None:
        seeds = [1]
    ov = {}
    if a.exponent is not None:
        ov.update(exponent_left=a.exponent, exponent_right=a.exponent)
    if a.cap is not None:
        ov.update(cap_left=a.cap, cap_right=a.cap)
    if a.blocks is not None:
        ov["blocks"] = Blocks(a.blocks) if a.blocks > 0 else None
    for name in names:
        for seed in seeds:
            p = preset_params(name, seed, a.scale, a.cap_scaling, a.drop_isolated, **ov)
            path, rec = write(p, a.out)
            r = rec["realised"]
            print(
                f"{path}  |U|={r['n_left']:,} |V|={r['n_right']:,} |E|={r['n_edges']:,} "
                f"maxdeg={r['left']['max_degree']}/{r['right']['max_degree']} "
                f"gen {rec['generate_s']:.1f} s write {rec['write_s']:.1f} s",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
