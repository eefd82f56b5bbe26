"""Differential check of cuMBE against the brute-force oracle.

    python -m cumbe.selfcheck --simulator --examples 20      # CI: CUDA simulator, one block
    python -m cumbe.selfcheck --examples 200 --blocks 1,2,7,0  # on a GPU

On a GPU every kernel build the checks may launch is compiled first, in parallel processes
(``--warm-jobs``, :mod:`cumbe.warm`): compiled one after another on first launch they took
more than 8 minutes of an H100 machine before the first few examples had run.

Seeded random small bipartite graphs (no shrinking: see main) run through
every variant with the run parameters cycled per case: k in {1, 2, 3, 24}, the
stealing test switch (``eager_steal`` 0..3: stop signal raised after every
first-level fetch, work published from any level or only from deeper ones),
candidate side, instrumented or not, and every other case with warp arenas too
small for the largest task, so that tasks run block-wide, tasks in pieces (each
piece runs the task's level-0 nodes and keeps its share of their branches), and the compact
task layout's build (``compact_layout``) in half of the runs.  ``--dense`` adds
dense graphs (deep search trees).  Count and fingerprint must equal
:func:`mbebench.oracle.count_and_fingerprint`.  ``--simulator`` sets
NUMBA_ENABLE_CUDASIM before numba is imported, so run it as its own process.
Prints one JSON line; exit status 1 on the first mismatch, whose graph, parameters,
expected and actual count go to stderr at once ("COUNTEREXAMPLE {...}"); with
``--run-limit`` a run that hangs is reported the same way.
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
        idle_fraction=(0.0, 0.25, 0.6)[(case + vi) % 3],
        pieces=(1, 2, 3, 5, 1)[(case + 2 * vi) % 5],
        compact_layout=bool((case // 3 + vi) % 2),
        rounds=bool((case // 4 + vi) % 2) and variant != "noRS",
        # with rounds: hub rows for every list, for none, for the lists of 1/32 of the
        # candidates or more (cumbe.hubs)
        hub_divisor=(16, 0, 1)[(case // 8 + vi) % 3],
    )


def run_args(graph, params: dict) -> dict:
    """The engine's arguments for ``params``: ``pieces`` K > 1 runs every task in up to K
    pieces in one launch (:func:`cumbe.prepare.split`; noRS keeps whole tasks), so the
    pieces' level-0 rule is checked against the whole count, stolen pieces included."""
    from cumbe.engine import prepare_for
    from cumbe.prepare import split

    out = {k: v for k, v in params.items() if k != "pieces"}
    if params.get("pieces", 1) > 1:
        out["prepared"] = split(prepare_for(graph, params["variant"], params["side"]), 1.0,
                                params["pieces"])
    return out


def block_arena(graph, params: dict) -> int:
    """Warp arena words that push the largest task(s) onto a whole block."""
    from cumbe.engine import task_needs
    from cumbe.prepare import prepare
    from cumbe.variants import ABLATIONS

    rs = ABLATIONS[params["variant"]][0]
    prep = prepare(graph, params["side"], rs)
    if prep.tasks.size == 0:
        return 0
    needs = task_needs(prep, rs, bool(params.get("compact_layout")))
    warps = params["threads"] // 32
    aw = -(-int(needs.max()) // warps)
    return aw + (aw & 1)


# Graphs on which a GPU run once went wrong, with the run parameters that showed it.
# On a GPU: noRS thieves of a level above the victim's deepest one missed the
# vertex whose subtree the victim was in (it joins Q only when that subtree ends), and
# counted non-maximal bicliques (98 instead of 96); warps steal from each other in the
# simulator as blocks do on a GPU.  Seeded random graphs of up to 9 vertices a side
# did not show it (tools/mutate.py, break cumbe-noRS-stolen-branch).
REGRESSIONS = [
    {
        "name": "noRS-stolen-branch",
        "n_left": 13, "n_right": 13,
        "left": [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4,
                 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8,
                 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 10, 10, 10, 10, 10, 10, 11, 11, 11, 11, 12,
                 12, 12, 12, 12, 12],
        "right": [0, 3, 4, 6, 10, 12, 1, 3, 7, 9, 11, 12, 4, 7, 10, 11, 1, 2, 5, 6, 12, 0, 1,
                  2, 3, 6, 8, 12, 0, 3, 5, 6, 11, 12, 0, 1, 3, 5, 7, 8, 9, 12, 1, 2, 4, 5, 8,
                  9, 0, 1, 4, 5, 6, 7, 8, 9, 12, 2, 3, 5, 6, 10, 11, 2, 5, 6, 9, 10, 12, 0, 5,
                  9, 12, 0, 2, 4, 9, 10, 11],
        # each of the three shows the bug on its own, though not on every run: which thief
        # takes which piece depends on how the simulator's threads interleave (the first:
        # 10 of 10 runs with the bug put back)
        "runs": [dict(variant="noRS", threads=128, k=3, eager_steal=2, side="left"),
                 dict(variant="noRS", threads=64, k=2, eager_steal=3, side="right"),
                 dict(variant="noRS", threads=128, k=24, eager_steal=3, side="right")],
    },
]


def random_graphs(examples: int, max_side: int, seed: int):
    """(n_left, n_right, left, right) of ``examples`` seeded random graphs: sides of 1 to
    max_side vertices, edge densities spread over (0, 1), the first one edgeless."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for case in range(examples):
        nl, nr = (int(x) for x in rng.integers(1, max_side + 1, 2))
        density = 0.0 if case == 0 else (0.1 + 0.85 * ((case * 0.618034) % 1.0))
        left, right = np.nonzero(rng.random((nl, nr)) < density)
        yield nl, nr, left, right


def dense_graphs(count: int, max_side: int, seed: int):
    """Dense graphs (deep search trees, work published and stolen from deep levels)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    for _ in range(count):
        nl, nr = (int(x) for x in rng.integers(5, max(max_side, 6) + 1, 2))
        left, right = np.nonzero(rng.random((nl, nr)) < rng.uniform(0.4, 0.8))
        yield nl, nr, left, right


def _watchdog(limit_s: float, current: dict):
    """A hung kernel (a broken barrier, a lost piece of work) never returns: after
    limit_s in one run, print the graph it hangs on and exit."""
    import threading

    def watch():
        while True:
            time.sleep(1.0)
            started = current.get("started")
            if started is not None and time.time() - started > limit_s:
                report = {**current["case"], "hang": f"one run took over {limit_s:g} s"}
                print("COUNTEREXAMPLE " + json.dumps(report), file=sys.stderr, flush=True)
                print(json.dumps({"ok": False, "failure": report}), flush=True)
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cumbe.selfcheck")
    ap.add_argument("--simulator", action="store_true")
    ap.add_argument("--examples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-side", type=int, default=7)
    ap.add_argument("--dense", type=int, default=0, help="extra dense graphs (deep trees)")
    ap.add_argument("--dense-max-side", type=int, default=0, help="0: --max-side")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--blocks", default="1", help="comma list of grid sizes (0 = max cooperative)")
    ap.add_argument("--threads", type=int, default=0, help="0: 64 in the simulator, else 128")
    ap.add_argument("--time-limit", type=float, default=0.0)
    ap.add_argument("--regressions", type=int, default=0,
                    help="also run the first N parameter sets of every graph in REGRESSIONS")
    ap.add_argument("--run-limit", type=float, default=0.0,
                    help="seconds one run may take before it counts as hung (0: no limit)")
    ap.add_argument("--warm-jobs", type=int, default=min(os.cpu_count() or 1, 16),
                    help="on a GPU: compile every build the checks may launch first, this many "
                         "at once (cumbe.warm; each compile holds a process of its own; 0: "
                         "compile each when first launched)")
    a = ap.parse_args(argv)
    if a.simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # (the engine shortens the GIL switch
        # interval around every simulated launch: cumbe.engine.SIM_SWITCH_S)
    # the kernel against the oracle through numba's launch, the reference; the launch of
    # a cached cubin (cumbe/cubin.py) is checked against numba's by
    # benchmarks/overhead/smoke.py
    os.environ["MBEBENCH_FAST_LAUNCH"] = "0"
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
    if not a.simulator and a.warm_jobs > 0:
        # up to 28 builds, each compiled in this process on its first launch: minutes of
        # one core before the first checks, where all of them in parallel take one or two
        from cumbe.warm import every_build, warm

        builds = every_build(variants, threads)
        print(f"selfcheck: compiling {len(builds)} builds, {a.warm_jobs} at once",
              file=sys.stderr, flush=True)

        def failed(line: str) -> None:  # a build that fails here compiles on first launch
            r = json.loads(line)
            if "error" in r:
                why = (r["error"].strip().splitlines() or ["?"])[-1]
                print(f"selfcheck: {r['build']} did not compile in advance: {why}",
                      file=sys.stderr, flush=True)

        warm(builds, a.warm_jobs, emit=failed)
    done = {"examples": 0, "runs": 0, "block_wide_runs": 0}
    current: dict = {}
    if a.run_limit > 0:
        _watchdog(a.run_limit, current)

    def check(nl, nr, left, right, case):
        """None, or the first mismatch: the graph, the run's parameters, expected and got."""
        g = from_edges(np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64), nl, nr)
        graph = {"n_left": nl, "n_right": nr, "left": list(map(int, left)),
                 "right": list(map(int, right))}
        ref = count_and_fingerprint(g)
        for vi, v in enumerate(variants):
            for nb in blocks:
                params = case_params(case, vi, v, nb, threads)
                if (case + vi) % 2:
                    aw = block_arena(g, params)
                    if aw:
                        params["warp_arena_words"] = aw
                        done["block_wide_runs"] += 1
                bad = attempt(g, params, ref, {"example": done["examples"] + 1, "graph": graph})
                if bad:
                    return bad
        done["examples"] += 1
        return None

    def attempt(g, params, ref, what):
        """One run: None, or what went wrong (a wrong answer or a crash) and where."""
        current["case"] = {**what, "params": params, "expected": [ref[0], hex(ref[1])]}
        current["started"] = time.time()
        try:
            r = run(g, **run_args(g, params))
        except Exception as e:  # a crashed kernel is a counterexample too
            return {**current["case"], "error": f"{type(e).__name__}: {e}"[:2000]}
        finally:
            current["started"] = None
        done["runs"] += 1
        if (r.count, r.fingerprint) != ref:
            return {**current["case"], "got": [r.count, hex(r.fingerprint)]}
        # the kernel's progress counters end at every task, all the cost, every biclique
        pe = r.stats.get("progress_end")
        if pe and (pe["tasks"], pe["cost"], pe["bicliques"]) != (pe["of_tasks"], pe["of_cost"],
                                                                 r.count):
            return {**current["case"], "got": [r.count, hex(r.fingerprint)], "progress_end": pe}
        return None

    # No shrinking: a simulator run takes seconds, and a search for a smaller
    # counterexample ran into the tests' timeouts and lost the one found.  The graphs
    # are small to begin with; the first failing one is printed at once.
    cases = [*((gr, case) for case, gr in enumerate(random_graphs(a.examples, a.max_side,
                                                                   a.seed))),
             *((gr, case) for case, gr in enumerate(dense_graphs(
                 a.dense, a.dense_max_side or a.max_side, a.seed + 1)))]
    failure = None
    for gr, case in cases:
        if a.time_limit and time.time() - t_start > a.time_limit:
            break
        failure = check(*gr, case=case)
        if failure:
            break
    done["regression_runs"] = 0
    for reg in REGRESSIONS if failure is None else []:
        g = from_edges(reg["left"], reg["right"], reg["n_left"], reg["n_right"])
        ref = count_and_fingerprint(g)
        for params in reg["runs"][:a.regressions]:
            failure = attempt(g, params, ref, {"regression": reg["name"]})
            done["regression_runs"] += 1
            if failure:
                break
        if failure:
            break
    if failure:
        print("COUNTEREXAMPLE " + json.dumps(failure), file=sys.stderr, flush=True)
    out = {"ok": failure is None, **done, "seconds": round(time.time() - t_start, 1),
           "simulator": a.simulator, "failure": failure}
    print(json.dumps(out))
    return 0 if failure is None else 1


if __name__ == "__main__":
    sys.exit(main())
