"""Differential check of cuMBE against the brute-force oracle.

    python -m cumbe.selfcheck --simulator --examples 20      # CI: CUDA simulator, one block
    python -m cumbe.selfcheck --examples 200 --blocks 1,2,7,0  # on a GPU

Random small bipartite graphs (hypothesis when installed, else numpy) run through
every variant, instrumented and not, k in {1, 2, 3}, with and without forced
("eager") work stealing, then ``--dense`` dense graphs whose deep search trees
make the blocks publish work from below level 1; count and fingerprint must equal
:func:`mbebench.oracle.count_and_fingerprint`.  ``--simulator`` sets
NUMBA_ENABLE_CUDASIM before numba is imported, so run it as its own process.
Prints one JSON line; exit status 1 on the first mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

from cumbe.spec import VARIANTS


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cumbe.selfcheck")
    ap.add_argument("--simulator", action="store_true")
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-side", type=int, default=7)
    ap.add_argument("--dense", type=int, default=0,
                    help="extra dense graphs (deep trees) with stealing forced below level 1")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--blocks", default="1", help="comma list of grid sizes (0 = max cooperative)")
    ap.add_argument("--threads", type=int, default=0, help="0: 32 in the simulator, else 128")
    ap.add_argument("--time-limit", type=float, default=0.0)
    a = ap.parse_args(argv)
    if a.simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    warnings.simplefilter("ignore")
    import numpy as np

    from cumbe.engine import run
    from mbebench.csr import from_edges
    from mbebench.oracle import count_and_fingerprint

    variants = a.variants.split(",")
    blocks = [int(b) for b in a.blocks.split(",")]
    threads = a.threads or (32 if a.simulator else 128)
    group, sel_group = (8, 4) if a.simulator else (32, 8)
    t_start = time.time()
    done = {"examples": 0, "runs": 0}
    failure: list = []

    def check(nl, nr, left, right, case, deep=False):
        g = from_edges(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64), nl, nr)
        ref = count_and_fingerprint(g)
        for vi, v in enumerate(variants):
            for nb in blocks:
                k = 1 + (case + vi) % 3
                params = dict(variant=v, k=k, blocks=nb, threads=threads, group=group,
                              sel_group=sel_group, instrument=bool((case + vi) % 2),
                              eager_steal=(case // 2 + vi) % 4, side=("auto", "left", "right")[case % 3])
                if deep:
                    # stop raised after every fetch, work published only from level >= 2
                    params.update(k=3, eager_steal=2 + (case + vi) % 2)
                r = run(g, **params)
                done["runs"] += 1
                if (r.count, r.fingerprint) != ref:
                    failure.append({"graph": {"n_left": nl, "n_right": nr, "left": list(map(int, left)),
                                              "right": list(map(int, right))},
                                    "params": params, "expected": [ref[0], hex(ref[1])],
                                    "got": [r.count, hex(r.fingerprint)]})
                    raise AssertionError(json.dumps(failure[-1]))
        done["examples"] += 1

    try:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import strategies as st

        @st.composite
        def graphs(draw):
            nl = draw(st.integers(1, a.max_side))
            nr = draw(st.integers(1, a.max_side))
            pairs = draw(st.lists(st.tuples(st.integers(0, nl - 1), st.integers(0, nr - 1)),
                                  max_size=nl * nr))
            return nl, nr, [p[0] for p in pairs], [p[1] for p in pairs]

        @settings(max_examples=max(a.examples, 1), deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), print_blob=False)
        @given(graphs())
        def prop(gr):
            if a.time_limit and time.time() - t_start > a.time_limit:
                return
            check(*gr, case=done["examples"])

        if a.examples > 0:
            prop()
    except ImportError:
        rng = np.random.default_rng(a.seed)
        for case in range(a.examples):
            nl, nr = (int(x) for x in rng.integers(1, a.max_side + 1, 2))
            m = int(rng.integers(0, nl * nr + 1))
            check(nl, nr, rng.integers(0, nl, m), rng.integers(0, nr, m), case)
    except AssertionError:
        pass
    rng = np.random.default_rng(a.seed + 1)
    for case in range(a.dense if not failure else 0):
        nl, nr = (int(x) for x in rng.integers(5, max(a.max_side, 6) + 1, 2))
        adj = rng.random((nl, nr)) < rng.uniform(0.4, 0.7)
        left, right = np.nonzero(adj)
        try:
            check(nl, nr, left, right, case, deep=True)
        except AssertionError:
            break
    out = {"ok": not failure, **done, "seconds": round(time.time() - t_start, 1),
           "simulator": a.simulator, "failure": failure[0] if failure else None}
    print(json.dumps(out))
    return 0 if not failure else 1


if __name__ == "__main__":
    sys.exit(main())
