"""Median kernel seconds of cuMBE on graphs, with host-side progress pieces switched off:
mode 'ds': the kernel on the default stream; 'np': no progress polling (e1.synchronize)."""
import json, statistics, sys
import numba.cuda as nc
mode, reps, graphs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
from cumbe import engine as E, launch as L
from mbebench.csr import read_csr
if "ds" in mode:
    nc.stream = lambda *a, **k: nc.default_stream()
if "np" in mode:
    _cl = L.checked_launch
    def _f(*a, **k):
        k["progress"] = None
        return _cl(*a, **k)
    L.checked_launch = _f
for p in graphs:
    g = read_csr(p)
    first = E.run(g)
    ts = [E.run(g).stats["kernel_s"] for _ in range(reps)]
    print(json.dumps({"mode": mode, "graph": p.rsplit("/", 1)[-1][:-4], "count": first.count,
                      "median_s": statistics.median(ts), "min_s": min(ts)}), flush=True)
