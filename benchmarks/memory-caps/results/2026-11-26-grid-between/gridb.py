"""Grids between the chooser's plans: for each (graph, cap), the chosen plan, the warp-only
plan and the wide plans at the block counts the model b/(1+6s) ranks best; runs alternated,
kernel seconds min of R; counts compared."""
import os, sys, json, time
from dataclasses import replace

sys.path[:0] = ['.', 'benchmarks']
import standins
from cumbe import engine as E, grid as GR, buffers as B
from mbebench.csr import read_csr
from numba import cuda

CASES = [("IMDB-actor-blocks:1", [1.0, 0.5], 2), ("stackoverflow-blocks:1", [1.0, 0.5], 2),
         ("BookCrossing-blocks:1", [1.0, 0.5, 0.25], 2), ("DBLP-author:1", [2.0, 1.0, 0.5], 2),
         ("YouTube-blocks:1", [0.5, 0.25], 4),
         (".csr/marvel.csr", [0.25], 4), (".csr/movielens-10m_ut.csr", [0.25], 4),
         (".csr/movielens-10m_ui.csr", [0.25], 4), (".csr/dbpedia-occupation.csr", [0.5], 4),
         (".csr/edit-nawiki.csr", [0.25], 3)]
BS = [1056, 960, 854, 768, 640, 528, 448, 384, 320, 264, 213, 160, 128]
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None
out = open(sys.argv[1], "a")
free = cuda.current_context().get_memory_info()[0]
for name, caps, R in CASES:
    if only and name not in only:
        continue
    t0 = time.time()
    if name.endswith(".csr"):
        g = read_csr(name)
    else:
        p, s = name.split(":")
        g, _ = standins.generate(standins.preset_params(p, seed=int(s), scale=1.0))
    prep = E.prepare_for(g)
    needs = E.task_needs(prep, True)
    tot = float(needs.sum())
    base = B.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), 24, 1056, 4, 2)
    E.run(g, prepared=prep)
    unc = min(E.run(g, prepared=prep).stats["kernel_s"] for _ in range(R))
    ref = E.run(g, prepared=prep)
    caps = [float(c) for c in os.environ.get("CUMBE_GRIDB_CAPS", "").split(",") if c] or caps
    for cap in caps:
        bud = GR.budget(free, int(cap * 2**30))
        ch = GR.choose(needs, base, 1056, bud)
        plans = {"chosen": None}
        mx = GR._largest_need(needs)
        wo = GR._most_blocks(base, mx, 1056, bud)
        if wo >= 1:
            plans[f"warps{wo}"] = (wo, mx)
        scored = []
        for b in BS:
            aw = GR._max_arena(replace(base, blocks=b), bud)
            if aw * 4 < mx or aw >= mx:
                continue
            s = needs[needs > aw].sum() / tot
            scored.append((b / (1 + 6 * s), b, aw))
        for _, b, aw in sorted(scored, reverse=True)[:3]:
            plans[f"wide{b}"] = (b, aw)
        res = {k: [] for k in plans}
        info = {}
        for rep in range(R):
            for k, pl in plans.items():
                if pl is None:
                    r = E.run(g, prepared=prep, device_memory_gib=cap)
                else:
                    r = E.run(g, prepared=prep, blocks=pl[0], warp_arena_words=pl[1])
                res[k].append(r.stats["kernel_s"])
                info[k] = (r.stats["blocks"], r.stats.get("block_tasks"), r.stats.get("arena_words_per_warp"),
                           r.count == ref.count and r.fingerprint == ref.fingerprint)
        rec = dict(graph=name, cap=cap, uncapped_s=unc, chosen=(ch.plan.blocks, ch.plan.arena_words, ch.block_tasks),
                   plans={k: dict(s=min(v), x=min(v) / unc, blocks=info[k][0], block_tasks=info[k][1],
                                  aw=info[k][2], same=info[k][3]) for k, v in res.items()})
        print(json.dumps(rec), flush=True)
        out.write(json.dumps(rec) + "\n"); out.flush()
    print(f"# {name} {time.time() - t0:.0f} s", flush=True)
