"""cuMBE engine: ``run(graph, variant="cuMBE", k=2, blocks=0, threads=512, ...)``.

Host side of :mod:`cumbe.kernel`: orientation, global candidate order, memory
estimate and allocation, compile (timed apart), a checked cooperative launch and
the result.  See docs/gpu.md.
"""

from __future__ import annotations

import os
import time

import numpy as np

from cumbe import launch as L
from mbebench.csr import CSRGraph
from mbebench.engine import EngineResult, EngineSkipped

VARIANTS = {
    # name: (reverse scanning, early stop, work stealing)
    "cuMBE": (True, True, True),
    "noRS": (False, True, True),
    "noES": (True, False, True),
    "noWS": (True, True, False),
}


def _sim_enabled() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _orient(graph: CSRGraph, side: str):
    """(candidate-side offsets, adj, other-side offsets, adj, cand_is_left)."""
    if side == "auto":
        # candidates from the side with the larger sum of squared degrees, so that the
        # reverse scans run over the low-degree side (measured on H100, docs/gpu.md)
        dl = np.diff(np.asarray(graph.left_offsets)).astype(np.float64)
        dr = np.diff(np.asarray(graph.right_offsets)).astype(np.float64)
        cand_left = float(np.dot(dl, dl)) >= float(np.dot(dr, dr))
    elif side == "smaller":  # the paper's rule: P from the smaller side
        cand_left = graph.n_left <= graph.n_right
    elif side in ("left", "right"):
        cand_left = side == "left"
    else:
        raise ValueError(f"side must be auto, smaller, left or right, not {side!r}")
    if cand_left:
        return (graph.left_offsets, graph.left_indices, graph.right_offsets,
                graph.right_indices, graph.n_left, graph.n_right, True)
    return (graph.right_offsets, graph.right_indices, graph.left_offsets,
            graph.left_indices, graph.n_right, graph.n_left, False)


def plan_memory(nU, nV, blocks, depth, rs=True, qcap=0):
    """Bytes of device memory the kernel needs (graph arrays excluded)."""
    m = max(nU, nV, 1)
    per_block = (
        4 * 2 * nV + nV  # Larr, posL, markL
        + 4 * 6 * nU  # Parr, posP, Rarr, posR, cnt, touched
        + 8 * nU  # keyTag (cached selection keys)
        + 4 * 4 * m  # aux A..D
        + 2 * 4 * (3 * nU + nV)  # pools (2 buffers): P, pos, R, L
        + (0 if rs else 2 * 4 * nU + 4 * qcap)  # pool Q, Q stack
        + depth * (8 * 4 + 2 * 8)  # level table
        + 2 * depth * (4 * 3 + 8 * 2)  # pools' level tables (2 buffers)
    )
    return int(per_block) * int(blocks)


@L.named_device_errors
def run(
    graph: CSRGraph,
    variant: str = "cuMBE",
    k: int = 2,
    blocks: int = 0,
    threads: int = 512,
    instrument: bool = False,
    side: str = "auto",
    group: int = 32,
    sel_group: int = 8,
    qcap_factor: int = 8,
    eager_steal: int = 0,
) -> EngineResult:
    """Count and fingerprint the maximal bicliques of ``graph`` on the GPU.

    The config parameters (``variant``, ``k``, ``threads`` = CUDA threads per block,
    ``blocks``, ``instrument``, ``side``) are declared, with their defaults and
    limits, in :mod:`cumbe.spec`; the pipeline passes all of them.  ``group``,
    ``sel_group``, ``qcap_factor`` and ``eager_steal`` are test and tuning knobs.
    Raises EngineSkipped without a CUDA device (unless NUMBA_ENABLE_CUDASIM=1) and
    a ``cumbe.launch`` error naming the graph when the device fails.
    """
    sim = _sim_enabled()
    label = L.graph_label(graph)  # names the graph in every error
    from numba import cuda  # imported late: the CPU engines never pay for it

    if not sim and not cuda.is_available():
        raise EngineSkipped("no CUDA device")
    from numba.cuda.cudadrv import driver

    from cumbe import kernel as K

    if variant not in VARIANTS:
        raise ValueError(f"unknown cuMBE variant {variant!r} (known: {', '.join(VARIANTS)})")
    rs, es, ws = VARIANTS[variant]
    k = int(k)
    if k < 1:
        raise ValueError("k must be >= 1")
    threads = int(threads)
    if threads > 512 or threads % group or threads % sel_group or threads // sel_group > 1024:
        raise ValueError("threads must be at most 512 and a multiple of group and sel_group")

    offU, adjU, offV, adjV, nU, nV, cand_left = _orient(graph, side)
    offU = np.ascontiguousarray(offU, dtype=np.int64)
    offV = np.ascontiguousarray(offV, dtype=np.int64)
    adjU = np.ascontiguousarray(adjU, dtype=np.int32)
    adjV = np.ascontiguousarray(adjV, dtype=np.int32)
    degU = np.diff(offU)
    # global candidate order: descending degree, so tasks taken from the end
    # process vertices in ascending degree (the degeneracy-like order of iMBEA)
    cand = np.nonzero(degU > 0)[0]
    order = cand[np.argsort(-degU[cand], kind="stable")].astype(np.int32)
    gpos = np.full(max(nU, 1), np.iinfo(np.int32).max, dtype=np.int32)
    gpos[order] = np.arange(order.size, dtype=np.int32)
    nG = int(order.size)
    maxdeg = int(degU.max()) if nU else 0
    depth = min(nU, maxdeg) + 3
    qcap = max(qcap_factor * nU, 64) if not rs else 1

    stats = {
        "variant": variant, "k": k, "threads": threads, "side": "left" if cand_left else "right",
        "n_candidates": nG, "instrumented": bool(instrument), "eager_steal": int(eager_steal),
    }
    if nG == 0:
        stats.update(blocks=0, blocks_requested=int(blocks), device="simulator" if sim else "")
        return EngineResult(0, 0, 0.0, 0.0, stats)

    t0 = time.perf_counter()
    kern = K.build(rs=rs, es=es, ws=ws, instr=instrument, g=group, sg=sel_group)

    # ---- grid size ----
    if sim:
        max_blocks = 1
        dev_name = "simulator"
    else:
        dev = cuda.get_current_device()
        dev_name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    blocks_req = int(blocks)

    def alloc(shape, dtype, zero=False):
        if sim:
            return cuda.to_device(np.zeros(shape, dtype=dtype))
        arr = cuda.device_array(shape, dtype=dtype)
        if zero and arr.size:
            driver.device_memset(arr, 0, arr.nbytes)
        return arr

    def make_args(nb):
        need = plan_memory(nU, nV, nb, depth, rs, qcap)
        graph_bytes = offU.nbytes + offV.nbytes + adjU.nbytes + adjV.nbytes + 8 * nU
        L.check_memory(need + graph_bytes, *L.device_memory(cuda), label,
                       f"{nb} blocks ({nU}+{nV} vertices)")
        m = max(nU, nV, 1)
        a = dict(
            offU=cuda.to_device(offU), adjU=cuda.to_device(adjU if adjU.size else np.zeros(1, np.int32)),
            offV=cuda.to_device(offV), adjV=cuda.to_device(adjV if adjV.size else np.zeros(1, np.int32)),
            gP=cuda.to_device(order), gpos=cuda.to_device(gpos),
        )
        U1, V1 = max(nU, 1), max(nV, 1)
        scratch = dict(
            Larr=alloc((nb, V1), np.int32), posL=alloc((nb, V1), np.int32),
            markL=alloc((nb, V1), np.uint8, zero=True),
            Parr=alloc((nb, U1), np.int32), posP=alloc((nb, U1), np.int32),
            Rarr=alloc((nb, U1), np.int32), posR=alloc((nb, U1), np.int32),
            cnt=alloc((nb, U1), np.int32, zero=True), touched=alloc((nb, U1), np.int32),
            keyTag=alloc((nb, U1), np.int64, zero=True),
            auxA=alloc((nb, m), np.int32), auxB=alloc((nb, m), np.int32),
            auxC=alloc((nb, m), np.int32), auxD=alloc((nb, m), np.int32),
            Qstack=alloc((nb, qcap), np.int32),
            lv=alloc((nb, depth, K.NF), np.int32), lvs=alloc((nb, depth, 2), np.uint64),
            poolP=alloc((2, nb, U1), np.int32), poolPos=alloc((2, nb, U1), np.int32),
            poolL=alloc((2, nb, V1), np.int32), poolR=alloc((2, nb, U1), np.int32),
            poolQ=alloc((2, nb, U1 if not rs else 1), np.int32),
            poolN=alloc((2, nb), np.int32, zero=True), poolI=alloc((2, nb, K.NPI), np.int32),
            poolLv=alloc((2, nb, depth, K.NPL), np.int32),
            poolLs=alloc((2, nb, depth, 2), np.uint64),
        )
        return a, scratch, need

    def launch(nb, a, scratch):
        gcount = cuda.to_device(np.array([nG], dtype=np.int32))
        stop = cuda.to_device(np.zeros(k + 2, dtype=np.int32))
        pubcnt = cuda.to_device(np.zeros(k + 2, dtype=np.int32))
        res_count = cuda.to_device(np.zeros(2, dtype=np.int64))
        res_fp = cuda.to_device(np.zeros(1, dtype=np.uint64))
        err = cuda.to_device(np.zeros(4, dtype=np.int32))
        ph = cuda.to_device(np.zeros((nb, K.NPH + 1), dtype=np.int64))
        tasks = cuda.to_device(np.zeros(nb, dtype=np.int64))
        s = scratch
        args = (
            a["offU"], a["adjU"], a["offV"], a["adjV"], a["gP"], a["gpos"], np.int64(nG),
            np.int64(nU), np.int64(nV), np.int32(1 if cand_left else 0), np.int32(k),
            np.int64(qcap),
            s["Larr"], s["posL"], s["markL"], s["Parr"], s["posP"], s["Rarr"], s["posR"],
            s["cnt"], s["touched"], s["keyTag"], s["auxA"], s["auxB"], s["auxC"], s["auxD"], s["Qstack"],
            s["lv"], s["lvs"], s["poolP"], s["poolPos"], s["poolL"], s["poolR"], s["poolQ"],
            s["poolN"], s["poolI"], s["poolLv"], s["poolLs"],
            gcount, stop, pubcnt, res_count, res_fp, err, ph, tasks, np.int32(int(eager_steal)),
        )
        return args, (res_count, res_fp, err, ph, tasks)

    compile_s = 0.0
    if sim:
        nb = 1
        stats["blocks_requested"] = blocks_req
    else:
        # compile for the exact argument types (timed apart from the kernel)
        a, scratch, _ = make_args(1)
        args, _outs = launch(1, a, scratch)
        sig = tuple(kern.typeof_pyval(x) for x in args)
        tc = time.perf_counter()
        ov = kern.compile(sig)
        compile_s = time.perf_counter() - tc
        max_blocks = int(ov.max_cooperative_grid_blocks(threads))
        nb = L.grid_blocks(blocks_req, max_blocks, threads, dev_name)
        stats["blocks_requested"] = blocks_req
        stats["max_cooperative_blocks"] = max_blocks
        if blocks_req > max_blocks:
            stats["blocks_clamped"] = True
        del a, scratch, args, _outs
    a, scratch, need = make_args(nb)
    args, outs = launch(nb, a, scratch)
    setup_s = time.perf_counter() - t0 - compile_s
    kernel_s = L.checked_launch(kern, nb, threads, args, cuda=cuda, what=label,
                                device=dev_name, events=not sim)
    res_count, res_fp, err, ph, tasks = (o.copy_to_host() for o in outs)
    L.check_ran(int(res_count[1]), nG, label)
    if err[0] == K.ERR_QCAP:
        raise RuntimeError(
            f"cuMBE {variant}: the explicit Q stack overflowed (qcap={qcap}); raise qcap_factor"
        )
    if err[0] != 0:
        raise RuntimeError(f"cuMBE kernel reported error code {int(err[0])}")
    stats.update(
        device=dev_name, blocks=int(nb), kernel_s=kernel_s, compile_s=compile_s,
        setup_s=setup_s, memory_bytes=int(need), depth_capacity=int(depth),
        nodes=int(res_count[1]),
    )
    if instrument:
        if sim:
            hz = 1e9  # simulator: perf_counter_ns stands in for cycles
        else:
            hz = float(cuda.get_current_device().CLOCK_RATE) * 1e3  # kHz -> Hz
        stats["clock_hz"] = hz
        totals = ph[:, K.NPH].astype(np.float64)
        idle = ph[:, 7].astype(np.float64)
        stats["worker_busy_s"] = [float(v) for v in (totals - idle) / hz]
        stats["worker_tasks"] = [int(v) for v in tasks]
        phases = {name: float(ph[:, i].sum() / hz) for i, name in enumerate(K.PHASES)}
        phases["other"] += float(idle.sum() / hz)
        # A block that runs out of work leaves the kernel and stops counting, but its SM
        # slot stays idle until the last block ends; the paper counts that as "others".
        # Without it a variant that idles more (noWS) would look cheaper than it is.
        tail = max(0.0, nb * kernel_s - sum(phases.values()))
        phases["other"] += tail
        stats["tail_idle_s"] = tail
        stats["phases_s"] = phases
    return EngineResult(int(res_count[0]), int(res_fp[0]), kernel_s, compile_s, stats)
