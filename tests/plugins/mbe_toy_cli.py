"""A command-line engine (README, "Bring your own engine"): reads a graph file the
pipeline exports, prints ``count: N`` and ``time_s: T``.

Stands in for a third-party MBE program, so it imports nothing from mbebench:
a brute force over the subsets of the smaller side (tiny graphs only).

    python -m mbe_toy_cli --format adj results/graphs/hubs.adj
    python -m mbe_toy_cli --format konect results/graphs/hubs.konect

``--wrong`` reports one biclique too many: a broken engine, for the tests of
the count cross-check.
"""

import argparse
import sys
import time


def read_adj(path):
    """Line u: the right neighbours of left vertex u (0-based)."""
    with open(path) as f:
        return [set(map(int, line.split())) for line in f]


def read_konect(path):
    """'% ...' header lines, then 'u v' per edge, 1-based."""
    adj = {}
    with open(path) as f:
        for line in f:
            if line.startswith("%") or not line.strip():
                continue
            u, v = (int(x) - 1 for x in line.split()[:2])
            adj.setdefault(u, set()).add(v)
    return [adj.get(u, set()) for u in range(max(adj) + 1 if adj else 0)]


def count_maximal_bicliques(left_adj):
    """Closed pairs (A, N(A)) with A = N(N(A)), both sides non-empty."""
    right_adj = {}
    for u, vs in enumerate(left_adj):
        for v in vs:
            right_adj.setdefault(v, set()).add(u)
    sides = [dict(enumerate(left_adj)), right_adj]
    small, other = sorted(sides, key=len)
    ids = sorted(small)
    if len(ids) > 20:
        sys.exit(f"toy engine: {len(ids)} vertices on the smaller side is too many")
    found = set()
    for mask in range(1, 1 << len(ids)):
        members = [ids[i] for i in range(len(ids)) if mask >> i & 1]
        common = set.intersection(*(small[u] for u in members))
        if not common:
            continue
        closure = set.intersection(*(other[v] for v in common))
        found.add(frozenset(closure))
    return len(found)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mbe_toy_cli")
    ap.add_argument("graph")
    ap.add_argument("--format", choices=["adj", "konect"], required=True)
    ap.add_argument("--wrong", action="store_true", help="report one biclique too many")
    a = ap.parse_args(argv)
    adj = read_adj(a.graph) if a.format == "adj" else read_konect(a.graph)
    t0 = time.perf_counter()
    count = count_maximal_bicliques(adj)
    elapsed = time.perf_counter() - t0
    print(f"read {len(adj)} left vertices from {a.graph}")
    print(f"count: {count + (1 if a.wrong else 0)}")
    print(f"time_s: {elapsed:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
