"""Kernel seconds of cuMBE on graphs, in the source tree on PYTHONPATH (run from that tree).

    python time_tree.py TAG REPS G1.csr [G2.csr ...] >> runs.jsonl

One JSON line per graph: the median kernel seconds of REPS launches after a first one,
count and fingerprint (checked against benchmarks/gpu/reference.json where it names the
graph by its file stem)."""
import json
import statistics
import sys
from pathlib import Path

from cumbe.engine import run
from mbebench.csr import read_csr

REF = json.loads((Path(__file__).resolve().parents[2] / "reference.json").read_text())

tag, reps = sys.argv[1], int(sys.argv[2])
for path in sys.argv[3:]:
    g = read_csr(path)
    first = run(g)
    times = [run(g).stats["kernel_s"] for _ in range(reps)]
    ref = REF.get(Path(path).stem)
    ok = None if not isinstance(ref, dict) else (
        ref["count"] == first.count and int(ref["fingerprint"], 16) == first.fingerprint)
    print(json.dumps({"tree": tag, "graph": Path(path).stem, "count": first.count,
                      "fp": hex(first.fingerprint), "reference_ok": ok,
                      "median_s": statistics.median(times), "times": times}), flush=True)
