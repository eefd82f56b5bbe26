"""A worker's arena words at 32-bit offsets from the worker's own base.

The arena is one int32 array for all workers, so a worker's word ``j`` is ``A[R + j]`` with
``R`` its 64-bit base: every access added ``R`` to the sign-extended ``j`` and scaled the sum,
four dependent instructions before the load (``IADD3``, ``LEA.HI.X.SX32``, ``LEA``,
``LEA.HI.X`` on sm_90).  :func:`base_at` computes the address of word ``R`` once and hides it
from the optimiser (an inline-PTX ``cvta.to.global``: LLVM folds a plain ``A[R:]`` back into
``A.data + 4 * (R + j)``); :func:`ld` and :func:`st` then reach word ``R + j`` with a 32-bit
``j``: one 32-bit add and one ``IMAD.WIDE``.  The scan of a list prefix that the selection and
the expansion run for every candidate went from 16 to 11 instructions a step, the partition
from 28 to 20 (``tools/kernel_text.py``'s build, nvdisasm).  Only for arrays in global memory
(the arena, the graph's lists) and offsets below 2**31 (a worker's arena offsets are int32
already; a vertex's list is shorter).  In the simulator the base is the view ``A[R:]``.
"""

from __future__ import annotations

from numba import cuda

from cumbe.kernel.sync import SIM


# the simulator's stand-ins: the base is the view from word R on
def _view_base(A, R):
    return A[R:]


def _view_ld(P, j):
    return P[j]


def _view_st(P, j, v):
    P[j] = v


if SIM:
    _base_at_impl, _ld_impl, _st_impl = _view_base, _view_ld, _view_st
else:
    from llvmlite import ir
    from numba.cuda import cgutils
    from numba.cuda import types as _types
    from numba.cuda.extending import intrinsic
    from numba.cuda.typing import signature as _signature

    _I32, _I64 = ir.IntType(32), ir.IntType(64)
    _GPTR = _I32.as_pointer(1)  # a global-space int32 pointer: ld.global, st.global

    @intrinsic
    def _base(typingctx, arr, start):
        """The global address of ``arr[start]`` as an integer the optimiser cannot see
        through."""
        sig = _signature(_types.uint64, arr, start)

        def codegen(context, builder, sig, args):
            aryty = sig.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            start = context.cast(builder, args[1], sig.args[1], _types.intp)
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [start],
                                           wraparound=False)
            hide = ir.InlineAsm(ir.FunctionType(_I64, [_I64]), "cvta.to.global.u64 $0, $1;",
                                "=l,l")
            return builder.call(hide, [builder.ptrtoint(ptr, _I64)])

        return sig, codegen

    def _word(builder, P, j):
        p = builder.inttoptr(P, _GPTR)
        return builder.gep(p, [builder.sext(j, _I64)], inbounds=True)

    @intrinsic
    def _ld(typingctx, P, j):
        sig = _signature(_types.int32, P, _types.int32)

        def codegen(context, builder, sig, args):
            return builder.load(_word(builder, args[0], args[1]), align=4)

        return sig, codegen

    @intrinsic
    def _st(typingctx, P, j, v):
        sig = _signature(_types.void, P, _types.int32, _types.int32)

        def codegen(context, builder, sig, args):
            builder.store(args[2], _word(builder, args[0], args[1]), align=4)
            return context.get_dummy_value()

        return sig, codegen

    def _base_at_impl(A, R):
        return _base(A, R)

    def _ld_impl(P, j):
        return _ld(P, j)

    def _st_impl(P, j, v):
        _st(P, j, v)


# module-level device functions, as the intrinsics of cumbe.kernel.sync (numba's disk
# cache pickles the kernel's closures; an intrinsic reached from one pickles differently
# in every process)
_dev = cuda.jit(device=True, **({} if SIM else {"forceinline": True}))
base_at = _dev(_base_at_impl)
ld = _dev(_ld_impl)
st = _dev(_st_impl)
