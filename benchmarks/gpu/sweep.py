"""Launch-parameter sweep of the full variant (device only):

    python benchmarks/gpu/sweep.py OUT [budget_s] [configs-json] [graphs]

``graphs``: comma list of KONECT names (CSR files in .csr/) or paths to CSR files;
counts and fingerprints are checked against benchmarks/gpu/reference.json where it
has the graph, and against the first config's result otherwise.  Each config is a
dict of cuMBE parameters (threads is a compile-time setting: warm the builds first
with benchmarks/gpu/warm.py).  Writes OUT/sweep.json after every run.
"""

import json
import statistics
import sys
import time
import warnings
from pathlib import Path

warnings.simplefilter("ignore")
sys.path.insert(0, ".")
from cumbe.engine import run  # noqa: E402
from mbebench.csr import read_csr  # noqa: E402
from mbebench.fingerprint import to_hex  # noqa: E402

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)
budget = float(sys.argv[2]) if len(sys.argv) > 2 else 300
ref = json.load(open("benchmarks/gpu/reference.json"))
configs = [dict(k=k, idle_fraction=f) for k in (8, 24, 64) for f in (0.0, 0.1)]
if len(sys.argv) > 3:
    configs = json.loads(sys.argv[3])
names = (sys.argv[4].split(",") if len(sys.argv) > 4 else
         ["marvel", "movielens-10m_ut", "movielens-10m_ti", "youtube-groupmemberships",
          "edit-nawiki"])
res = []
t0 = time.time()
for name in names:
    path = Path(name) if name.endswith(".csr") else Path(f".csr/{name}.csr")
    g = read_csr(path)
    expect = ref.get(path.stem)
    for c in configs:
        if time.time() - t0 > budget:
            break
        ts = []
        for _ in range(3):
            r = run(g, variant="cuMBE", **{"threads": 128, **c})
            ts.append(r.algo_seconds)
            if r.algo_seconds > 2:
                break
        got = {"count": r.count, "fingerprint": to_hex(r.fingerprint)}
        if expect is None:
            expect = got
        row = {"dataset": path.stem, **c, "blocks": r.stats["blocks"],
               "kernel_s": statistics.median(ts), "ok": got == {k: expect[k] for k in got}}
        res.append(row)
        print(row, flush=True)
        (out / "sweep.json").write_text(json.dumps(res, indent=1))
