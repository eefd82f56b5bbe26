"""Old grid rule against the new one (cumbe.grid._warps_win) where they choose differently:
the same graph, cap and call, runs alternated; kernel seconds, min of 5; counts compared."""
import sys, json
sys.path[:0] = ['.', 'benchmarks']
import standins
from cumbe import engine as E, grid as GR
from mbebench.csr import read_csr
new_rule = GR._warps_win
def old_rule(needs, wo, wide):
    return wo * 4 >= wide.plan.blocks
PAIRS = [(".csr/marvel.csr", 0.25), (".csr/movielens-10m_ut.csr", 0.25), (".csr/movielens-10m_ui.csr", 0.25),
         (".csr/dbpedia-occupation.csr", 0.5), (".csr/dbpedia-occupation.csr", 1.0), (".csr/movielens-10m_ti.csr", 0.25),
         ("BookCrossing-blocks:1", 0.25), ("BookCrossing-blocks:2", 0.25), ("BookCrossing-blocks:3", 0.25),
         ("YouTube-blocks:1:1.0", 1.0), ("YouTube-blocks:1:1.0", 0.5), ("BookCrossing-blocks:1:1.0", 1.0),
         ("stackoverflow-blocks:1:1.0", 1.0), ("IMDB-actor-blocks:1:1.0", 0.5)]
cache = {}
def graph(name):
    if name not in cache:
        if name.endswith(".csr"):
            cache[name] = read_csr(name)
        else:
            parts = name.split(":")
            scale = float(parts[2]) if len(parts) > 2 else 0.05
            cache[name], _ = standins.generate(standins.preset_params(parts[0], seed=int(parts[1]), scale=scale))
    return cache[name]
out = open(sys.argv[1], "w")
for name, cap in PAIRS:
    g = graph(name)
    E.run(g, device_memory_gib=cap)  # warm-up
    res = {}
    for rep in range(5 if "1.0" not in name else 2):
        for mode, rule in (("old", old_rule), ("new", new_rule)):
            GR._warps_win = rule
            r = E.run(g, device_memory_gib=cap)
            st = r.stats
            d = res.setdefault(mode, dict(ts=[], blocks=st["blocks"], block_tasks=st["block_tasks"], cf=(r.count, hex(r.fingerprint))))
            d["ts"].append(st["kernel_s"])
    GR._warps_win = new_rule
    rec = dict(graph=name, cap=cap, **{f"{m}_{k}": (min(v["ts"]) if k == "ts" else v[k]) for m, v in res.items() for k in ("ts", "blocks", "block_tasks", "cf")})
    rec["new_over_old"] = rec["new_ts"] / rec["old_ts"]
    rec["same_counts"] = rec["new_cf"] == rec["old_cf"]
    print(json.dumps(rec), flush=True); out.write(json.dumps(rec) + "\n"); out.flush()
