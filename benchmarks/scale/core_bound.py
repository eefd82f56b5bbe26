"""A lower bound on a graph's maximal bicliques from its hub core (CPU, no GPU needed).

    python benchmarks/scale/core_bound.py GRAPH.csr --k 40,60,80 [--json OUT.jsonl]

The core is the subgraph induced by the k highest-degree vertices of each side.  Every
maximal biclique (A, B) of the core closes to a maximal biclique of the graph whose core part
is (A, B) again (the graph's common neighbours of B meet the core in the core's, A, and so on
back), so distinct core bicliques close to distinct ones: the core's count (serial iMBEA,
``baselines.imbea``) is at most the graph's.  On a Chung-Lu graph with heavy hubs the hubs
are almost completely joined to each other, and an almost complete core with a few missing
edges holds combinatorially many maximal bicliques (a crown S_n, K_{n,n} less a matching, has
2^n - 2): this tells how many bicliques any engine must list before its time can be judged.
A line of JSON a k: the core's edges, density, count, fingerprint and seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from baselines import imbea
from mbebench.csr import CSRGraph, from_edges, read_csr


def hub_core(g: CSRGraph, k: int) -> CSRGraph:
    """The subgraph induced by the k highest-degree vertices of each side (ties: the lower
    id first out, as a stable sort leaves them), relabelled in id order."""
    dl = np.diff(g.left_offsets)
    dr = np.diff(g.right_offsets)
    top_l = np.sort(np.argsort(dl, kind="stable")[len(dl) - min(k, len(dl)):])
    top_r = np.sort(np.argsort(dr, kind="stable")[len(dr) - min(k, len(dr)):])
    in_l = np.zeros(g.n_left, bool)
    in_l[top_l] = True
    in_r = np.zeros(g.n_right, bool)
    in_r[top_r] = True
    left_of, right_of = g.edges()
    keep = in_l[left_of] & in_r[right_of]
    return from_edges(np.searchsorted(top_l, left_of[keep]),
                      np.searchsorted(top_r, right_of[keep]),
                      n_left=len(top_l), n_right=len(top_r))


def bound(g: CSRGraph, k: int) -> dict:
    core = hub_core(g, k)
    t = time.time()
    r = imbea.run(core)
    return {"k": k, "core_edges": int(core.n_edges),
            "density": round(core.n_edges / max(1, core.n_left * core.n_right), 4),
            "core_maximal_bicliques": int(r.count), "fingerprint": hex(int(r.fingerprint)),
            "seconds": round(time.time() - t, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--k", default="40,60,80", help="core sizes, a comma list")
    ap.add_argument("--json", type=Path, help="also append the rows to this file")
    a = ap.parse_args(argv)
    g = read_csr(a.graph)
    for k in (int(x) for x in a.k.split(",")):
        row = {"graph": a.graph.name, **bound(g, k)}
        print(json.dumps(row), flush=True)
        if a.json:
            with a.json.open("a") as fh:
                fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
