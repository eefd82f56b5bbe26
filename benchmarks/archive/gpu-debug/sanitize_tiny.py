"""Tiny graphs through every variant (run under compute-sanitizer on the device)."""
import sys, warnings
warnings.simplefilter("ignore")
import numpy as np
sys.path.insert(0, ".")
from cumbe.engine import run
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

rng = np.random.default_rng(3)
variants = sys.argv[1].split(",") if len(sys.argv) > 1 else ["noWS", "cuMBE", "noRS", "noES"]
for case in range(int(sys.argv[2]) if len(sys.argv) > 2 else 2):
    nl, nr = 6, 7
    m = 20
    g = from_edges(rng.integers(0, nl, m), rng.integers(0, nr, m), nl, nr)
    ref = count_and_fingerprint(g)
    for v in variants:
        for nb, eager in ((1, False), (2, True)):
            r = run(g, variant=v, blocks=nb, threads=64, eager_steal=eager, instrument=(case == 1))
            print(v, nb, eager, ref[0], r.count, (r.count, r.fingerprint) == ref, r.stats.get("max_cooperative_blocks"), flush=True)
