"""Grid choice under a cap: the chooser's pick against always preferring block-wide tasks
on the full grid (cumbe.grid._block_wide), same graph, same call."""
import json, sys, time
from dataclasses import replace
sys.path[:0] = ['.', 'benchmarks']
import numpy as np
import standins
from cumbe import engine as E, grid as GR, buffers as B
from mbebench.csr import read_csr

orig = GR.choose
def choose_wide(needs, base, max_blocks, budget):
    maxneed = GR._largest_need(needs)
    if B.nbytes(replace(base, blocks=max_blocks, arena_words=maxneed)) <= budget:
        return orig(needs, base, max_blocks, budget)
    try:
        return GR._block_wide(needs, base, max_blocks, budget, maxneed)
    except GR.DoesNotFit:
        return orig(needs, base, max_blocks, budget)

out = open(sys.argv[1], "w")
for preset in sys.argv[2].split(","):
    p = standins.preset_params(preset, seed=1)
    path, _ = standins.write(p, __import__("pathlib").Path("/tmp/wide"))
    g = read_csr(str(path))
    E.run(g, device_memory_gib=None)  # warm
    for cap in [None, 1.0, 0.5, 0.25]:
        for mode in (["default"] if cap is None else ["default", "wide"]):
            if preset.startswith("IMDB") and cap == 0.25 and mode == "default":
                continue  # past 25 s before
            GR.choose = orig if mode == "default" else choose_wide
            ts = []
            for rep in range(2):
                r = E.run(g, device_memory_gib=cap)
                ts.append(r.stats["kernel_s"])
            st = r.stats
            rec = dict(graph=preset, cap=cap, mode=mode, kernel_s=min(ts), count=r.count,
                       fp=hex(r.fingerprint), blocks=st["blocks"], aw=st["arena_words_per_warp"],
                       block_tasks=st["block_tasks"], reason=st["grid_reason"][:90])
            print(json.dumps(rec), flush=True); out.write(json.dumps(rec) + "\n"); out.flush()
