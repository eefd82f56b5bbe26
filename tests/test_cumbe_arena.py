"""The worker's arena at 32-bit offsets (:mod:`cumbe.kernel.arena`): what numba lowers it to.
No GPU or CUDA toolkit needed (numba's CUDA lowering to LLVM IR runs on any machine); what the
words hold is the kernel's oracle tests' business (the simulator runs the same steps on the
view ``A[R:]``, and the GPU oracle runs these intrinsics)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.sync import SIM


def _llvm_ir(fn, sig):
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda

    return compile_cuda(fn, types.void, sig, cc=(9, 0)).library.get_llvm_str()


def _probe(A, R, j, out):
    P = base_at(A, R)
    out[0] = ld(P, j)
    st(P, j, out[1])


@pytest.mark.skipif(SIM, reason="numba's CUDA simulator is forced on: no lowering")
def test_a_word_is_the_hidden_base_plus_a_widened_32_bit_offset(monkeypatch):
    import numba.cuda.dispatcher as nd
    from numba.cuda import types

    class _CC90:
        compute_capability = (9, 0)

    # the device functions compile for the current device: none here, so sm_90 (as
    # tools/kernel_text.py does)
    monkeypatch.setattr(nd, "get_current_device", lambda: _CC90())
    ir = _llvm_ir(_probe, (types.int32[::1], types.int64, types.int32, types.int32[::1]))
    # the base: A's address of word R, through an inline-PTX move LLVM cannot see into (a
    # plain A[R:] is folded back into A.data + 4 * (R + j), the 64-bit sum per access)
    assert ir.count("cvta.to.global.u64") >= 1
    # the word: a global-space int32 at base + sext(j): one IMAD.WIDE on sm_90
    assert re.search(r'sext i32 %"?[\w.]+"? to i64', ir)
    loads = re.findall(r"load i32, (?:i32|ptr) addrspace\(1\)", ir)
    stores = re.findall(r'store i32 %"?[\w.]+"?, (?:i32|ptr) addrspace\(1\)', ir)
    assert len(loads) == 1 and len(stores) == 1


def test_the_simulator_reads_and_writes_the_view_from_the_base():
    from cumbe.kernel import arena

    A = np.arange(10, dtype=np.int32)
    P = arena._view_base(A, np.int64(4))
    assert arena._view_ld(P, np.int32(2)) == 6
    arena._view_st(P, np.int32(3), np.int32(-1))
    assert A[7] == -1
    if SIM:  # the device functions the kernel calls are these there
        assert ld(base_at(A, np.int64(1)), np.int32(6)) == -1
