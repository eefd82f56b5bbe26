import json, sys
from mbebench.csr import read_csr
from baselines.imbea import run
for p in sys.argv[2:]:
    g = read_csr(p)
    r = run(g)
    print(json.dumps({"tree": sys.argv[1], "graph": p.split("/")[-1], "count": r.count, "s": round(r.algo_seconds, 4)}), flush=True)
