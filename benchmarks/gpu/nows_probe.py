"""GPU only. noWS plain against instrumented: the resources of both builds and their kernel times at
1,056, 264 and 132 blocks (the open question of benchmarks/device-pipeline/README.md).

    . benchmarks/gpu/device_env.sh && python3 benchmarks/gpu/nows_probe.py .csr/youtube-groupmemberships.csr

Output of 2026-11-26 (H100): results/2026-11-26-split-progress/nows.log.
"""
import json
import sys

from numba import cuda
from cumbe import kernel as K, buffers as B, engine as E
from mbebench.csr import read_csr
for instr in (False, True):
    kern = K.build(rs=True, es=True, ws=False, instr=instr, threads=128)
    sig = tuple(kern.typeof_pyval(x) for x in B.typing_dummies(cuda))
    ov = kern.compile(sig)
    info = {a: getattr(ov, a, None) for a in ("regs_per_thread", "local_mem_per_thread",
            "shared_mem_per_block", "const_mem_size")}
    info["max_coop"] = int(ov.max_cooperative_grid_blocks(128))
    print("noWS instr" if instr else "noWS plain", info, flush=True)
for g in sys.argv[1:]:
    G = read_csr(g)
    for blocks in (0, 264, 132):
        for instr in (False, True, False, True):
            r = E.run(G, variant="noWS", instrument=instr, blocks=blocks)
            busy = r.stats.get("worker_busy_s")
            row = dict(graph=g, blocks=r.stats["blocks"], instr=instr, kernel_s=round(r.algo_seconds, 4),
                       max_busy=round(max(busy), 4) if busy else None)
            print(json.dumps(row), flush=True)
