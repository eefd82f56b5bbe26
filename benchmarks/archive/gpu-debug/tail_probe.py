"""Where does a graph's kernel time go: throughput or a tail?  Device only:

    python benchmarks/archive/gpu-debug/tail_probe.py OUT.json GRAPH.csr[,GRAPH.csr...] [configs-json]

For each graph: the default run (median of 3), the instrumented run (per-warp busy seconds:
max, 99th percentile, median, mean, and the summed phases), and the given configs (default:
fewer blocks, idle_fraction 0.25, noWS).  If the busiest warp's time is close to the kernel
time and far above the mean, one chain of work decides the time (a tail); if the mean is
close, the grid is simply busy.
"""

from __future__ import annotations

import json
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

warnings.simplefilter("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from cumbe.engine import run
from mbebench.csr import read_csr

CONFIGS = [{"blocks": 264}, {"blocks": 528}, {"idle_fraction": 0.25}, {"k": 96},
           {"variant": "noWS"}]


def main() -> int:
    out = Path(sys.argv[1])
    graphs = sys.argv[2].split(",")
    configs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else CONFIGS
    rows = []
    for path in graphs:
        g = read_csr(path)
        ts = [run(g).algo_seconds for _ in range(4)][1:]
        r = run(g, instrument=True)
        busy = np.array(r.stats["worker_busy_s"])
        tasks = np.array(r.stats["worker_tasks"])
        top = int(np.argmax(busy))
        row = dict(graph=Path(path).stem, kernel_s=statistics.median(ts), count=r.count,
                   instr_kernel_s=r.algo_seconds, busy_max=float(busy.max()),
                   busy_p99=float(np.percentile(busy, 99)), busy_p50=float(np.median(busy)),
                   busy_mean=float(busy.mean()), top_warp=top, top_warp_tasks=int(tasks[top]),
                   phases_s={k: round(v, 4) for k, v in r.stats["phases_s"].items()},
                   nodes=r.stats["nodes"], tasks_run=r.stats["tasks_run"], configs=[])
        print(json.dumps({k: v for k, v in row.items() if k != "configs"}), flush=True)
        for c in configs:
            rr = [run(g, **c) for _ in range(2)]
            row["configs"].append(dict(**c, kernel_s=min(x.algo_seconds for x in rr),
                                       ok=all(x.count == r.count for x in rr)))
            print(json.dumps(row["configs"][-1]), flush=True)
        rows.append(row)
        out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
