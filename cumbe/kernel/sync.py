"""Barriers, the cycle counter and the relaxed load: inline PTX on the device, Python
stand-ins in numba's CUDA simulator (docs/gpu.md, "Facts learned")."""

from __future__ import annotations

import threading

import numpy as np
from numba import cuda
from numba.cuda import config as _cfg

from cumbe.kernel.consts import I64, U64, WARP

SIM = bool(_cfg.ENABLE_CUDASIM)


class _SimWarps:
    """Warp barriers for the simulator, which has no syncwarp: its threads are real
    Python threads, so 32 of them can meet at a threading.Barrier."""

    def __init__(self):
        self.lock = threading.Lock()
        self.bars = {}

    def reset(self):
        with self.lock:
            self.bars = {}

    def wait(self):
        t = threading.current_thread()
        key = (t.blockIdx.x, t.threadIdx.x // WARP)
        with self.lock:
            bar = self.bars.get(key)
            if bar is None:
                bar = self.bars[key] = threading.Barrier(WARP)
        bar.wait()


SIM_WARPS = _SimWarps()


class _SimWarpRows:
    """The simulator's stand-in for a full warp's exchange of values (it has no ballot and no
    shuffles): each lane posts its value, the warp meets, every lane reads the warp's row.
    The barrier before posting keeps a fast lane from overwriting the previous exchange's row
    while a slow one still reads it."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rows = {}

    def gather(self, v):
        t = threading.current_thread()
        key = (t.blockIdx.x, t.threadIdx.x // WARP)
        with self.lock:
            row = self.rows.setdefault(key, [0] * WARP)
        SIM_WARPS.wait()
        row[t.threadIdx.x % WARP] = int(v)
        SIM_WARPS.wait()
        return list(row)


SIM_ROWS = _SimWarpRows()


def _locked_shared_array(orig, lock):
    """numba-cuda's simulator (0.30.4) hands out a block's shared array by looking up its
    source line in a dict and, if absent, creating it, with no lock: two of a block's
    threads that both miss each get an array of their own, uninitialised, and one thread
    then reads shared slots no other thread writes (a garbage wedge count became an arena
    index 65727 of 380 one run in ~30 under load).  The same, under one lock."""
    import sys as _sys

    from numba.cuda import types as _types
    from numba.cuda.np import numpy_support as _ns

    def array(self, shape, dtype, alignment=None):
        if alignment is not None or shape == 0:  # (no table: dynamic shared, or an error)
            return orig(self, shape, dtype, alignment)
        if isinstance(dtype, _types.Type):
            dtype = _ns.as_dtype(dtype)
        f = _sys._getframe(1)
        caller = (f.f_code.co_filename, f.f_lineno)  # numba's key: the caller's line
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    array.orig = orig
    return array


if SIM:
    import time as _time

    def clock64():  # simulator: wall clock in ns stands in for cycles
        return np.int64(_time.perf_counter_ns())

    def _bsync_sim():
        cuda.syncthreads()

    # a device function: the simulator swaps in its fake cuda module only for the module
    # of the kernel or device function it is running, not for a plain helper's module
    bsync = cuda.jit(device=True)(_bsync_sim)

    def wsync():
        SIM_WARPS.wait()

    def ballot(pred):
        row = SIM_ROWS.gather(1 if pred else 0)
        # numba types ballot_sync as int32: lane 31's bit is the sign, as on the device
        return np.uint32(sum(b << i for i, b in enumerate(row))).view(np.int32)

    def warp_sum(v):
        return np.uint64(sum(SIM_ROWS.gather(v)) % (1 << 64))

    def warp_min(v):
        return np.int64(min(SIM_ROWS.gather(v)))

    def load_relaxed(arr, i, j):
        return arr[i, j]

    from numba.cuda.simulator import kernelapi as _kapi

    from cumbe import sim_barrier as _sim_barrier

    _sim_barrier.install()

    if not getattr(_kapi.FakeCUDAShared.array, "cumbe_locked", False):
        _kapi.FakeCUDAShared.array = _locked_shared_array(_kapi.FakeCUDAShared.array,
                                                          threading.Lock())
        _kapi.FakeCUDAShared.array.cumbe_locked = True

    def _popc(self, val):
        """Bits set in val's two's complement, as the device counts them (the simulator's
        counts those of its absolute value: 1 for -1)."""
        width = val.dtype.itemsize * 8 if isinstance(val, np.integer) else 64
        return bin(int(val) & ((1 << width) - 1)).count("1")

    _kapi.FakeCUDAModule.popc = _popc

else:
    from llvmlite import ir
    from numba.cuda import types as _types
    from numba.cuda.extending import intrinsic
    from numba.cuda.typing import signature as _signature

    @intrinsic
    def clock64(typingctx):
        """The SM's 64-bit cycle counter (PTX %clock64; numba-cuda 0.30.4 has none)."""
        sig = _signature(_types.int64)

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.IntType(64), [])
            asm = ir.InlineAsm(fnty, "mov.u64 $0, %clock64;", "=l", side_effect=True)
            return builder.call(asm, [])

        return sig, codegen

    @intrinsic
    def bsync(typingctx):
        """Block barrier that tolerates warps arriving diverged (PTX ``barrier.sync``
        without ``.aligned``): ``cuda.syncthreads()`` is the aligned form, and warps
        that run their own loops reach it at different points (compute-sanitizer
        synccheck, then CUDA_ERROR_ILLEGAL_INSTRUCTION)."""
        sig = _signature(_types.void)

        def codegen(context, builder, sig, args):
            fnty = ir.FunctionType(ir.VoidType(), [])
            asm = ir.InlineAsm(fnty, "barrier.sync 0;", "~{memory}", side_effect=True)
            builder.call(asm, [])
            return context.get_dummy_value()

        return sig, codegen

    @intrinsic
    def load_relaxed(typingctx, arr, i, j):
        """arr[i, j] read from L2 without an atomic (PTX ld.relaxed.gpu): every warp polls
        the stop flag once per node, and thousands of same-address atomics would queue."""
        sig = _signature(_types.int32, arr, i, j)

        def codegen(context, builder, sig, args):
            from numba.cuda import cgutils

            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            idx = [context.cast(builder, args[1], sig.args[1], _types.intp),
                   context.cast(builder, args[2], sig.args[2], _types.intp)]
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, idx, wraparound=False)
            fnty = ir.FunctionType(ir.IntType(32), [ptr.type])
            asm = ir.InlineAsm(fnty, "ld.relaxed.gpu.s32 $0, [$1];", "=r,l", side_effect=True)
            return builder.call(asm, [ptr])

        return sig, codegen

    def _wsync_impl():
        cuda.syncwarp(0xFFFFFFFF)

    wsync = cuda.jit(device=True, forceinline=True)(_wsync_impl)

    def _ballot_impl(pred):
        return cuda.ballot_sync(0xFFFFFFFF, pred)

    ballot = cuda.jit(device=True, forceinline=True)(_ballot_impl)

    # numba shuffles 64-bit signed words only: a sum mod 2**64 is the same either way
    def _warp_sum_impl(v):
        x = I64(v)
        x += cuda.shfl_xor_sync(0xFFFFFFFF, x, 16)
        x += cuda.shfl_xor_sync(0xFFFFFFFF, x, 8)
        x += cuda.shfl_xor_sync(0xFFFFFFFF, x, 4)
        x += cuda.shfl_xor_sync(0xFFFFFFFF, x, 2)
        x += cuda.shfl_xor_sync(0xFFFFFFFF, x, 1)
        return U64(x)

    warp_sum = cuda.jit(device=True, forceinline=True)(_warp_sum_impl)

    def _warp_min_impl(v):
        x = I64(v)
        x = min(x, cuda.shfl_xor_sync(0xFFFFFFFF, x, 16))
        x = min(x, cuda.shfl_xor_sync(0xFFFFFFFF, x, 8))
        x = min(x, cuda.shfl_xor_sync(0xFFFFFFFF, x, 4))
        x = min(x, cuda.shfl_xor_sync(0xFFFFFFFF, x, 2))
        x = min(x, cuda.shfl_xor_sync(0xFFFFFFFF, x, 1))
        return x

    warp_min = cuda.jit(device=True, forceinline=True)(_warp_min_impl)


def _block_sync_impl():
    # The inline barrier alone did not order memory between the warps of a block: on an
    # H100, block-wide tasks read control words (the next level, the selection minimum)
    # and arena words before lane 0 had written them (compute-sanitizer racecheck and
    # initcheck), then indexed with them.  With CTA fences on both sides (or with
    # cuda.syncthreads) the same runs are clean (docs/gpu.md, "The block-wide fault").
    if not SIM:
        cuda.threadfence_block()
    bsync()
    if not SIM:
        cuda.threadfence_block()


def _relaxed_load_impl(arr, i, j):
    return load_relaxed(arr, i, j)


def _clock_impl():
    return clock64()


# The intrinsics wrapped in module-level device functions, which the kernel's closures
# use instead: numba keys its disk cache by a pickle of the closures, and an intrinsic
# reached from a closure pickles with a fresh uuid in every process, so every run
# compiled the kernel again (~40 s).
_dev = cuda.jit(device=True, **({} if SIM else {"forceinline": True}))
block_sync = _dev(_block_sync_impl)
relaxed_load = _dev(_relaxed_load_impl)
clock = _dev(_clock_impl)
