"""Differential check of cuMBE against the brute-force oracle.

    python -m cumbe.selfcheck --simulator --examples 20      # CI: CUDA simulator, one block
    python -m cumbe.selfcheck --examples 200 --blocks 1,2,7,0  # on a GPU

Random small bipartite graphs (hypothesis when installed, else numpy) run through
every variant with the run parameters cycled per case: k in {1, 2, 3, 24}, the
stealing test switch (``eager_steal`` 0..3: stop signal raised after every
first-level fetch, work published from any level or only from deeper ones),
candidate side, instrumented or not, and every other case with warp arenas too
small for the largest task, so that tasks run block-wide.  ``--dense`` adds
dense graphs (deep search trees).  Count and fingerprint must equal
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

from cumbe.variants import VARIANTS


def case_params(case: int, vi: int, variant: str, blocks: int, threads: int) -> dict:
    """The run parameters of one check (cycled so that every combination recurs)."""
    return dict(
        variant=variant, blocks=blocks, threads=threads,
        k=(1, 2, 3, 24)[(case + vi) % 4],
        eager_steal=(case // 2 + vi) % 4,
        side=("auto", "left", "right")[case % 3],
        instrument=bool((case + vi) % 2),
        idle_fraction=(0.0, 0.0, 0.6)[(case + vi) % 3],
    )


def block_arena(graph, params: dict) -> int:
    """Warp arena words that push the largest task(s) onto a whole block."""
    from cumbe import layout
    from cumbe.prepare import prepare
    from cumbe.variants import ABLATIONS

    rs = ABLATIONS[params["variant"]][0]
    prep = prepare(graph, params["side"], rs)
    if prep.tasks.size == 0:
        return 0
    needs = layout.needs(prep.task_deg, prep.task_wedges, prep.n_higher, prep.task_dv, rs)
    warps = params["threads"] // 32
    aw = -(-int(needs.max()) // warps)
    return aw + (aw & 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cumbe.selfcheck")
    ap.add_argument("--simulator", action="store_true")
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-side", type=int, default=7)
    ap.add_argument("--dense", type=int, default=0, help="extra dense graphs (deep trees)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--blocks", default="1", help="comma list of grid sizes (0 = max cooperative)")
    ap.add_argument("--threads", type=int, default=0, help="0: 64 in the simulator, else 128")
    ap.add_argument("--time-limit", type=float, default=0.0)
    a = ap.parse_args(argv)
    if a.simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    warnings.simplefilter("ignore")
    import numpy as np

    np.seterr(all="ignore")  # uint64 hash arithmetic wraps on purpose (simulator: numpy)
    from cumbe.engine import run
    from mbebench.csr import from_edges
    from mbebench.oracle import count_and_fingerprint

    variants = a.variants.split(",")
    blocks = [int(b) for b in a.blocks.split(",")]
    threads = a.threads or (64 if a.simulator else 128)
    t_start = time.time()
    done = {"examples": 0, "runs": 0, "block_wide_runs": 0}
    failure: list = []

    def check(nl, nr, left, right, case):
        g = from_edges(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64), nl, nr)
        ref = count_and_fingerprint(g)
        for vi, v in enumerate(variants):
            for nb in blocks:
                params = case_params(case, vi, v, nb, threads)
                if (case + vi) % 2:
                    aw = block_arena(g, params)
                    if aw:
                        params["warp_arena_words"] = aw
                        done["block_wide_runs"] += 1
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
        try:
            from hypothesis import HealthCheck, given, settings
            from hypothesis import strategies as st
        except ImportError:
            st = None
        if st is not None:
            @st.composite
            def graphs(draw):
                nl = draw(st.integers(1, a.max_side))
                nr = draw(st.integers(1, a.max_side))
                pairs = draw(st.lists(st.tuples(st.integers(0, nl - 1), st.integers(0, nr - 1)),
                                      max_size=nl * nr))
                return nl, nr, [p[0] for p in pairs], [p[1] for p in pairs]

            @settings(max_examples=max(a.examples, 1), deadline=None, derandomize=True,
                      database=None, suppress_health_check=list(HealthCheck), print_blob=False)
            @given(graphs())
            def prop(gr):
                if a.time_limit and time.time() - t_start > a.time_limit:
                    return
                check(*gr, case=done["examples"])

            if a.examples > 0:
                prop()
        else:
            rng = np.random.default_rng(a.seed)
            for case in range(a.examples):
                nl, nr = (int(x) for x in rng.integers(1, a.max_side + 1, 2))
                m = int(rng.integers(0, nl * nr + 1))
                check(nl, nr, rng.integers(0, nl, m), rng.integers(0, nr, m), case)
        rng = np.random.default_rng(a.seed + 1)
        for case in range(a.dense):
            if a.time_limit and time.time() - t_start > a.time_limit:
                break
            nl, nr = (int(x) for x in rng.integers(5, max(a.max_side, 6) + 1, 2))
            adj = rng.random((nl, nr)) < rng.uniform(0.4, 0.8)
            left, right = np.nonzero(adj)
            check(nl, nr, left, right, case)
    except AssertionError:
        pass
    out = {"ok": not failure, **done, "seconds": round(time.time() - t_start, 1),
           "simulator": a.simulator, "failure": failure[0] if failure else None}
    print(json.dumps(out))
    return 0 if not failure else 1


if __name__ == "__main__":
    sys.exit(main())
