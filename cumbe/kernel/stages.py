"""The grid stages (paper §III-C, §III-D): workers take first-level tasks, then stolen
pieces, stage by stage, with grid syncs between the stages.

Phase 0 runs the tasks too big for a warp, one block each (its warps' arenas joined),
blocks stealing from blocks; phase 1 runs every other task, one warp each.  Stage 1 of
a phase runs first-level tasks; each later stage steals what the previous one
published; once a stage published nothing every block leaves the stage loop together,
so all blocks execute the same grid syncs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from numba import cuda

from cumbe.kernel.consts import C_TASK, CTL_FIXED, I32, I64, NPH, NS, NS64, NSU, P_AW, P_CANDLEFT
from cumbe.kernel.consts import P_EAGER, P_HALF, P_IDLE, P_K, P_NT0, P_NT1, P_NWK, PH_FETCH, PH_IDLE
from cumbe.kernel.consts import PH_STEAL, PR_BICLIQUES, PR_COST, PR_TASKS, S_CUR, S_DONE, S_GOT
from cumbe.kernel.consts import S_IDX, S_OFF, S_PK, S_PN, S_PUB, U_SUML, WARP, X_COST, ZERO64
from cumbe.kernel.lists import combine_sides
from cumbe.kernel.sync import block_sync, bsync, clock, relaxed_load, wsync
from cumbe.layout import F_SUM, K_LV


def make_progress(cfg):
    """What a worker's lane 0 adds up: its own totals, and the run's progress counters
    (cumbe.progress), which the host copies while the kernel runs."""
    dev = cfg.dev

    @dev
    def tally(acc, accf, c, f, nn):
        """A piece's bicliques, fingerprint and nodes, into the worker's totals (acc[0] is
        also what the worker reports: acc[3] holds how much of it it has reported)."""
        acc[0] += c
        accf[0] += f
        acc[1] += nn

    @dev
    def report(prog, b, sh64, g, acc, own):
        """A piece ended: the bicliques found since the last report go to the progress
        counters and, when it was a first-level task's own part (``own``: what it published
        is stolen, and thieves report their pieces' bicliques), the task and its cost, so
        that at the end they are exactly the task count, the total cost and the count.
        Reductions whose result is not used: the worker does not wait for them."""
        db = acc[0] - acc[3]
        acc[3] = acc[0]
        cuda.atomic.add(prog, (b, PR_BICLIQUES), db)
        if own:
            cuda.atomic.add(prog, (b, PR_TASKS), 1)
            cuda.atomic.add(prog, (b, PR_COST), sh64[g, X_COST])

    return SimpleNamespace(tally=tally, report=report)


def make_run_stage(cfg, grp, fetch, stealing, searching, progress):
    """One stage of one worker of kind ``grp``."""
    dev, WS, INSTR, PIECES, gsync = cfg.dev, cfg.ws, cfg.instr, cfg.pieces, grp.sync
    # the steps it calls, as closure variables (numba compiles them in)
    fetch_task, search = fetch.fetch_task, searching.search
    out_of_work, steal, steal_node = stealing.out_of_work, stealing.steal, stealing.steal_node
    tally, report = progress.tally, progress.report

    @dev
    def run_stage(A, A64, prm, offU, adjU, offV, adjV, orig, tasks, task_piece, ph, pb, pn, pl,
                  ctl, sh, sh64, shu, g, gl, me, phase, stage, nst, aw, nwk, task0, ntask, err,
                  phl, acc, accf, prog, hubs):
        """One stage of one worker: take tasks (stage 1) or stolen pieces until none
        is left; acc collects bicliques, nodes and tasks, accf the fingerprint."""
        kst = prm[P_K]
        cand_left = prm[P_CANDLEFT] != 0
        eager = prm[P_EAGER]
        par = stage % 2
        pprev = (stage + 1) % 2
        R = I64(par) * prm[P_HALF] + I64(me) * I64(aw)
        interruptible = WS and stage < nst
        # workers that must run out of work before the busy ones publish theirs
        idle_at = max(I64(1), (prm[P_IDLE] * I64(nwk)) // 1000)
        if gl == 0:
            sh[g, S_PUB] = 0
            sh[g, S_CUR] = 0
        gsync()
        t_last = I64(0)
        if INSTR and gl % WARP == 0:
            t_last = clock()
        while True:
            # First-level tasks first, in every stage: a stage normally starts with none
            # left (the stop signal is raised once the last one is taken), but the test
            # switch ``eager`` raises it early, and the tasks left over must still run.
            if gl == 0:
                r = I32(0x7FFFFFFF)
                if stage == 1 or relaxed_load(ctl, phase, C_TASK) < ntask:
                    r = cuda.atomic.add(ctl, (phase, C_TASK), 1)
                if WS and stage == 1 and eager != 0:
                    cuda.atomic.max(ctl, (phase, CTL_FIXED + 1), 1)
                if WS and stage == 1 and r >= ntask:
                    out_of_work(ctl, phase, kst, 1, idle_at)
                sh[g, S_GOT] = 1 if r < ntask else 0
                sh[g, S_IDX] = r
            gsync()
            own = sh[g, S_GOT] != 0  # a first-level task of its own, not a stolen piece
            if own:
                it = task0 + sh[g, S_IDX]
                v = tasks[it]
                if PIECES and gl == 0:
                    sh[g, S_PK] = task_piece[it, 0]
                    sh[g, S_PN] = task_piece[it, 1]
                c0 = fetch_task(A, A64, prm, offU, adjU, offV, adjV, orig, sh, sh64, shu,
                                g, gl, v, R, aw, cand_left, err)
                # the root biclique is the first piece's
                if gl == 0 and c0 > 0 and (not PIECES or sh[g, S_PK] == 0):
                    tally(acc, accf, 1,
                          combine_sides(A64[(R + sh[g, S_OFF + K_LV] + F_SUM) >> 1],
                                        shu[g, U_SUML], cand_left), 0)
                if INSTR and gl % WARP == 0:
                    t = clock()
                    phl[PH_FETCH] += t - t_last
                    t_last = t
                if c0 == 0:
                    continue
            else:
                if stage == 1:
                    break
                if not steal(ph, pn, pl, ctl, sh, g, gl, me, pprev, phase, kst, stage,
                             idle_at):
                    break
                c, f, nn = steal_node(A, A64, prm, ph, pb, sh, sh64, shu, g, gl, R, pprev,
                                      aw, adjU, offV, adjV, orig, cand_left, err, hubs)
                if gl == 0:
                    tally(acc, accf, c, f, nn)
                if INSTR and gl % WARP == 0:
                    t = clock()
                    phl[PH_STEAL] += t - t_last
                    t_last = t
            if gl == 0:
                acc[2] += 1
            c, f, nn = search(A, A64, prm, adjU, offV, adjV, orig, ph, pb, pn, pl, ctl,
                              sh, sh64, shu, g, gl, me, par, phase, kst, stage,
                              interruptible, cand_left, err, phl, hubs)
            if INSTR and gl % WARP == 0:
                t_last = clock()
            if gl == 0:
                tally(acc, accf, c, f, nn)
                report(prog, cuda.blockIdx.x, sh64, g, acc, own)
            if sh[g, S_PUB] != 0:
                break

    return run_stage


def make_kernel(cfg, run_stage_warp, run_stage_block, progress):
    """The kernel: the block-wide phase, then the warp phase, each in stages."""
    dev, WS, INSTR, THREADS = cfg.dev, cfg.ws, cfg.instr, cfg.threads
    NW = THREADS // WARP
    NG = NW + 1  # shared-memory slot sets: one per warp, one for the block

    @dev
    def grid_barrier(lane, phl):
        """All threads of the grid; a block's warps come from loops of their own."""
        t = I64(0)
        block_sync()
        if INSTR and lane == 0:
            t = clock()
        wsync()
        cuda.cg.this_grid().sync()
        if INSTR and lane == 0:
            phl[PH_IDLE] += clock() - t

    @dev
    def published(ctl, phase, kst, stage, sh, tid):
        """Did any worker publish in ``stage``?  The same answer in every block: all
        publishing precedes the grid barrier before it is read."""
        if tid == 0:
            sh[NW, S_DONE] = cuda.atomic.add(ctl, (phase, CTL_FIXED + (kst + 2) + stage), 0)
        block_sync()
        return sh[NW, S_DONE] != 0

    def kernel(offU, adjU, offV, adjV, orig, tasks, task_piece, prm, arena, arena64, ctl, pool_hdr,
               pool_base, pool_n, pool_list, res, res_fp, err, ph_out, tasks_out, prog, hubs):
        b = cuda.blockIdx.x
        nb = cuda.gridDim.x
        tid = cuda.threadIdx.x
        warp = tid // WARP
        lane = tid % WARP
        sh = cuda.shared.array((NG, NS), dtype=np.int32)
        sh64 = cuda.shared.array((NG, NS64), dtype=np.int64)
        shu = cuda.shared.array((NG, NSU), dtype=np.uint64)
        phl = cuda.local.array(NPH, dtype=np.int64)
        acc = cuda.local.array(4, dtype=np.int64)  # bicliques, nodes, tasks, reported
        accf = cuda.local.array(1, dtype=np.uint64)
        for i in range(NPH):
            phl[i] = 0
        for i in range(4):
            acc[i] = 0
        accf[0] = ZERO64
        i = I32(tid)
        while i < NG * NS:
            sh[i // NS, i % NS] = 0
            i = I32(i + THREADS)
        kst = prm[P_K]
        aw = prm[P_AW]
        nwk = prm[P_NWK]
        nt0 = prm[P_NT0]
        nt1 = prm[P_NT1]
        nst = kst if WS else 1
        t_start = I64(0)
        if INSTR and lane == 0:
            t_start = clock()
        bsync()
        me = b * NW + warp
        # phase 0: the tasks too big for a warp, one block each (its warps' arenas joined),
        # blocks stealing from blocks; phase 1: every other task, one warp each
        for phase in range(2):
            if phase == 0 and nt0 == 0:
                continue
            nstp = nst
            for stage in range(1, nstp + 1):
                if stage > 1:
                    grid_barrier(lane, phl)
                    if not published(ctl, phase, kst, stage - 1, sh, tid):
                        break  # nothing is left anywhere: every block leaves together
                if phase == 0:
                    run_stage_block(arena, arena64, prm, offU, adjU, offV, adjV, orig, tasks,
                                    task_piece, pool_hdr, pool_base, pool_n, pool_list, ctl, sh,
                                    sh64, shu, NW, tid, b, 0, stage, nstp, aw * NW, nb, 0, nt0, err, phl,
                                    acc, accf, prog, hubs)
                else:
                    run_stage_warp(arena, arena64, prm, offU, adjU, offV, adjV, orig, tasks,
                                   task_piece, pool_hdr, pool_base, pool_n, pool_list, ctl, sh,
                                   sh64, shu, warp, lane, me, 1, stage, nst, aw, nwk, nt0, nt1, err, phl,
                                   acc, accf, prog, hubs)
                bsync()
            if phase == 0:
                if tid == 0:
                    cuda.atomic.add(res, 3, acc[2])
                grid_barrier(lane, phl)  # the warps reuse the blocks' arenas
        if lane == 0:
            cuda.atomic.add(res, 0, acc[0])
            cuda.atomic.add(res_fp, 0, accf[0])
            cuda.atomic.add(res, 1, acc[1])
            cuda.atomic.add(res, 2, acc[2])
            if INSTR:
                t = clock()
                wk = b * NW + warp
                for i in range(NPH):
                    ph_out[wk, i] = phl[i]
                ph_out[wk, NPH] = t - t_start
                tasks_out[wk] = acc[2]

    return kernel
