"""Compile cuMBE kernels into numba's on-disk cache, several at once (one process each).

    python benchmarks/gpu/warm.py --jobs 8 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128

A cold compile of one kernel build (variant x instrumented x tasks in pieces x threads per
block, e.g. ``cuMBE-instr-pieces:128``)
takes ~30 s of one CPU core; the engine then loads it from the cache (set
NUMBA_CACHE_DIR to the same folder for both).  Prints one JSON line per build
with its compile seconds, registers per thread and local (spill) memory.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def compile_one(spec: str) -> dict:
    sys.path.insert(0, str(REPO))
    from numba import cuda

    from cumbe import buffers as B
    from cumbe import kernel as K
    from cumbe.engine import VARIANTS

    name, threads = spec.split(":")
    variant, *flags = name.split("-")
    rs, es, ws = VARIANTS[variant]
    kern = K.build(rs=rs, es=es, ws=ws, instr="instr" in flags, threads=int(threads),
                   pieces="pieces" in flags, compact="compact" in flags)
    sig = tuple(kern.typeof_pyval(x) for x in B.typing_dummies(cuda))
    t = time.perf_counter()
    ov = kern.compile(sig)
    out = {"build": spec, "compile_s": round(time.perf_counter() - t, 1),
           "max_cooperative_blocks": int(ov.max_cooperative_grid_blocks(int(threads)))}
    # the compiled kernel's own figures (the dispatcher's get_* need the signature form
    # numba keys its overloads by, which the typed dummies are not)
    for key, attr in (("regs", "regs_per_thread"), ("local_bytes", "local_mem_per_thread"),
                      ("shared_bytes", "shared_mem_per_block")):
        try:
            out[key] = int(getattr(ov, attr))
        except Exception as e:  # noqa: BLE001 - informational only
            out[key] = f"{type(e).__name__}"
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+", help="variant[-instr][-pieces][-compact]:threads")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(compile_one(a.builds[0])), flush=True)
        return 0
    running, ok = [], True
    pending = list(a.builds)
    while pending or running:
        while pending and len(running) < a.jobs:
            b = pending.pop(0)
            running.append(subprocess.Popen([sys.executable, __file__, "--one", b],
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True))
        p = running.pop(0)
        out, err = p.communicate()
        if p.returncode:
            ok = False
            print(json.dumps({"build": p.args[-1], "error": err[-2000:]}), flush=True)
        else:
            print(out.strip().splitlines()[-1], flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
