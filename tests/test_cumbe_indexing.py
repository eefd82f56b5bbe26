"""The kernel's array indices compile without Python's negative-index wraparound (28 % of its
machine code, 17-30 % of its time on an H100: docs/gpu-performance.md), and nothing else's
do.  No GPU or CUDA toolkit needed: numba's CUDA lowering to LLVM IR runs on any machine."""

from __future__ import annotations

import re

import pytest

from cumbe import kernel
from cumbe.kernel import indexing
from cumbe.kernel.sync import SIM

pytestmark = pytest.mark.skipif(SIM, reason="numba's CUDA simulator is forced on: no lowering")


def _llvm_ir(fn, sig):
    from numba.cuda import types
    from numba.cuda.compiler import compile_cuda

    ir = compile_cuda(fn, types.void, sig, cc=(9, 0)).library.get_llvm_str()
    # the instructions that tell wraparound (compare, select) and the index's widening
    return {op: len(re.findall(rf"\b{op}\b", ir)) for op in ("icmp slt", "select", "sext", "zext")}


def _store(a, i):
    a[i] = 1


def test_signed_indices_lose_their_wraparound_only_inside_the_context():
    from numba.cuda import types

    sig = (types.int32[::1], types.int64)
    before = _llvm_ir(_store, sig)
    with indexing.non_negative():
        inside = _llvm_ir(_store, sig)
    after = _llvm_ir(_store, sig)
    # numba's wraparound: i < 0 ? i + len : i
    assert before["icmp slt"] >= 1 and before["select"] >= 1
    assert inside["icmp slt"] == inside["select"] == 0
    assert after == before


def test_unsigned_indices_compile_as_before():
    from numba.cuda import types

    sig = (types.int32[::1], types.uint32)
    plain = _llvm_ir(_store, sig)
    assert plain["zext"] >= 1 and plain["sext"] == 0  # a uint32 past 2^31 stays positive
    with indexing.non_negative():
        assert _llvm_ir(_store, sig) == plain


def test_every_kernel_build_compiles_inside_the_context_unless_told_not_to(monkeypatch):
    """kernel.build's dispatcher enters non_negative around every compile (the launch path
    and ``kern.compile(sig)`` both call it); CUMBE_WRAPAROUND=1 keeps numba's indexing."""
    monkeypatch.delenv("CUMBE_WRAPAROUND", raising=False)
    monkeypatch.setattr(kernel, "_CACHE", {})
    cls = type(kernel.build(cache=False))
    seen = []
    monkeypatch.setattr(cls, "compile",
                        lambda self, sig: seen.append(getattr(indexing._STATE, "depth", 0)))
    monkeypatch.setattr(kernel, "_CACHE", {})
    kernel.build(cache=False).compile(("sig",))
    kernel.build(rs=False, es=False, ws=False, cache=False).compile(("sig",))
    monkeypatch.setenv("CUMBE_WRAPAROUND", "1")
    kernel.build(cache=False).compile(("sig",))
    assert seen == [1, 1, 0]
    assert getattr(indexing._STATE, "depth", 0) == 0
