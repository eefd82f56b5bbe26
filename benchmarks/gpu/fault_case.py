"""One small random graph through one cuMBE configuration, against the brute-force oracle.

For compute-sanitizer on the device (benchmarks/archive/gpu/rounds/3-block-stealing-fault):

    CUMBE_LINEINFO=1 CUMBE_NOINLINE=1 compute-sanitizer --tool memcheck --print-limit 3 \\
      --show-backtrace device python3 benchmarks/gpu/fault_case.py 7 \\
      '{"variant": "noES", "side": "left", "blocks": 2, "k": 2, "eager_steal": 1, "warp_arena_words": 50}'

``case``: 0..7, one of eight graphs (2..14 vertices a side, density 0.1..0.7, seed 12345);
the second argument: cuMBE parameters as JSON.  Prints one RESULT line: ok, WRONG or FAULT.
"""

import json
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
np.seterr(all="ignore")
sys.path.insert(0, ".")
from cumbe.engine import run
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint


def graphs(n: int = 8, seed: int = 12345):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        nl, nr = (int(x) for x in rng.integers(2, 15, 2))
        m = int(rng.uniform(0.1, 0.7) * nl * nr)
        out.append(from_edges(rng.integers(0, nl, m), rng.integers(0, nr, m), nl, nr))
    return out


def main() -> int:
    g = graphs()[int(sys.argv[1])]
    params = json.loads(sys.argv[2])
    ref = count_and_fingerprint(g)
    try:
        r = run(g, **params)
    except Exception as e:  # noqa: BLE001  a fault is the finding: report it on the RESULT line
        print("RESULT", json.dumps(params), "FAULT", str(e)[:200], flush=True)
        return 1
    ok = (r.count, r.fingerprint) == ref
    print("RESULT", json.dumps(params), "ok" if ok else f"WRONG {r.count} vs {ref[0]}",
          "block_tasks", r.stats.get("block_tasks"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
