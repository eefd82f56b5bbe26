"""Grid sweep of one source tree (cwd): per (graph, cap) the chooser's plan, the warp-only
plan and wide plans over a list of block counts; kernel seconds, counts vs uncapped."""
import json, sys, time
from dataclasses import replace
sys.path[:0] = ['.']
from cumbe import engine as E, grid as GR, buffers as B
from mbebench.csr import read_csr
from numba import cuda

out, tree, path, caps = sys.argv[1], sys.argv[2], sys.argv[3], [float(c) for c in sys.argv[4].split(",")]
R = int(sys.argv[5]) if len(sys.argv) > 5 else 1
BS = [1056, 854, 704, 608, 528, 448, 384, 320, 264, 213, 160, 128]
free = cuda.current_context().get_memory_info()[0]
t0 = time.time()
g = read_csr(path)
prep = E.prepare_for(g)
needs = E.task_needs(prep, True)
tot = float(needs.sum())
base = B.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), int(prep.tasks.size), 24, 1056, 4, 2)
E.run(g, prepared=prep)
runs = [E.run(g, prepared=prep) for _ in range(max(R, 2))]
unc = min(r.stats["kernel_s"] for r in runs)
ref = runs[0]
f = open(out, "a")
for cap in caps:
    bud = GR.budget(free, int(cap * 2**30))
    mx = GR._largest_need(needs)
    plans = {"chosen": None}
    wo = GR._most_blocks(base, mx, 1056, bud)
    if wo >= 1:
        plans["warps"] = (wo, mx)
    for b in BS:
        aw = GR._max_arena(replace(base, blocks=b), bud)
        if aw * 4 < mx or aw >= mx:
            continue
        plans[f"w{b}"] = (b, aw)
    for k, pl in plans.items():
        ts = []
        for _ in range(R):
            if pl is None:
                r = E.run(g, prepared=prep, device_memory_gib=cap)
            else:
                r = E.run(g, prepared=prep, blocks=pl[0], warp_arena_words=pl[1])
            ts.append(r.stats["kernel_s"])
        rec = dict(tree=tree, graph=path.split("/")[-1], cap=cap, plan=k, uncapped_s=unc,
                   s=min(ts), x=min(ts) / unc, blocks=r.stats["blocks"],
                   aw=r.stats["arena_words_per_warp"], block_tasks=r.stats["block_tasks"],
                   share=float(needs[needs > r.stats["arena_words_per_warp"]].sum() / tot),
                   same=r.count == ref.count and r.fingerprint == ref.fingerprint)
        f.write(json.dumps(rec) + "\n"); f.flush()
        print(json.dumps(rec), flush=True)
print(f"# {tree} {path} {time.time() - t0:.0f} s", flush=True)
