"""``python -m cumbe run <graph.csr> [--variant ...] [--json out.json]``."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv=None) -> int:
    from cumbe.spec import SIDES, SPEC, VARIANTS

    d = SPEC.defaults()
    ap = argparse.ArgumentParser(prog="python -m cumbe")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="enumerate the maximal bicliques of a CSR graph on the GPU")
    r.add_argument("graph")
    r.add_argument("--variant", default=d["variant"], choices=VARIANTS)
    r.add_argument("--k", type=int, default=d["k"], help="work-stealing stages")
    r.add_argument("--blocks", type=int, default=d["blocks"],
                   help="0 = the largest cooperative grid that fits the memory")
    r.add_argument("--threads", type=int, default=d["threads"], help="CUDA threads per block")
    r.add_argument("--device-memory-gib", type=float, default=d["device_memory_gib"],
                   help="use at most this much device memory (default: $CUMBE_DEVICE_MEMORY_GIB,"
                        " else all that is free)")
    r.add_argument("--side", default=d["side"], choices=SIDES)
    r.add_argument("--instrument", action="store_true")
    r.add_argument("--json", dest="json_out")
    a = ap.parse_args(argv)

    from cumbe.engine import run
    from cumbe.launch import DeviceError, DeviceMemoryError, LaunchError
    from mbebench.csr import read_csr
    from mbebench.engine import EngineSkipped
    from mbebench.fingerprint import to_hex

    g = read_csr(a.graph)
    try:
        res = run(g, variant=a.variant, k=a.k, blocks=a.blocks, threads=a.threads,
                  side=a.side, instrument=a.instrument, device_memory_gib=a.device_memory_gib)
    except EngineSkipped as e:
        print(f"skipped: {e}", file=sys.stderr)
        return 2
    except (DeviceMemoryError, LaunchError, DeviceError) as e:  # one line naming the graph
        print(f"error: {e}", file=sys.stderr)
        return 1
    out = {"graph": a.graph, "count": res.count, "fingerprint": to_hex(res.fingerprint),
           "kernel_s": res.algo_seconds, "compile_s": res.compile_seconds, "stats": res.stats}
    print(f"count {res.count}  fingerprint {to_hex(res.fingerprint)}  kernel {res.algo_seconds:.6f} s"
          f"  (compile {res.compile_seconds:.2f} s, {res.stats.get('blocks')} blocks"
          f" x {res.stats.get('threads')}, {res.stats.get('device')})")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
