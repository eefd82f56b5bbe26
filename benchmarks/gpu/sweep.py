"""Launch-parameter sweep of the full variant (device only):
    python benchmarks/gpu/sweep.py OUT [budget_s] [configs-json] [konect,names]"""
import json, statistics, sys, time, warnings
from pathlib import Path
warnings.simplefilter("ignore")
sys.path.insert(0, ".")
from cumbe.engine import run
from mbebench.csr import read_csr
from mbebench.fingerprint import to_hex

out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
ref = json.load(open("benchmarks/gpu/reference.json"))
configs = [dict(threads=512, group=32, sel_group=8, k=2), dict(threads=256, group=32, sel_group=8, k=2),
           dict(threads=128, group=32, sel_group=8, k=2), dict(threads=512, group=16, sel_group=8, k=2),
           dict(threads=512, group=32, sel_group=4, k=2), dict(threads=512, group=32, sel_group=16, k=2),
           dict(threads=512, group=32, sel_group=8, k=3), dict(threads=256, group=16, sel_group=4, k=2)]
if len(sys.argv) > 3:
    configs = json.loads(sys.argv[3])
names = sys.argv[4].split(",") if len(sys.argv) > 4 else ["marvel", "movielens-10m_ui", "youtube-groupmemberships", "edit-nawiki"]
res = []
t0 = time.time()
for name in names:
    g = read_csr(f".csr/{name}.csr")
    for c in configs:
        if time.time() - t0 > float(sys.argv[2] if len(sys.argv) > 2 else 300):
            break
        ts = []
        for _ in range(1 if name == "edit-nawiki" else 2):
            r = run(g, variant="cuMBE", **c)
            ok = r.count == ref[name]["count"] and to_hex(r.fingerprint) == ref[name]["fingerprint"]
            ts.append(r.algo_seconds)
        row = dict(dataset=name, **c, blocks=r.stats["blocks"], kernel_s=statistics.median(ts), ok=ok)
        res.append(row); print(row, flush=True)
        (out / "sweep.json").write_text(json.dumps(res, indent=1))
