import json, os, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
np.seterr(all="ignore")
sys.path.insert(0, ".")
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint
from cumbe.engine import run
rng = np.random.default_rng(12345)
graphs = []
for case in range(8):
    nl, nr = (int(x) for x in rng.integers(2, 15, 2))
    dens = rng.uniform(0.1, 0.7)
    m = int(dens * nl * nr)
    graphs.append(from_edges(rng.integers(0, nl, m), rng.integers(0, nr, m), nl, nr))
g = graphs[int(sys.argv[1])]
p = json.loads(sys.argv[2])
ref = count_and_fingerprint(g)
try:
    r = run(g, **p)
    print("RESULT", json.dumps(p), "ok" if (r.count, r.fingerprint) == ref else f"WRONG {r.count} vs {ref[0]}", r.stats.get("block_tasks"), flush=True)
except Exception as e:
    print("RESULT", json.dumps(p), "FAULT", str(e)[:200], flush=True)
