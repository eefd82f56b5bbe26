"""Array indexing without Python's negative-index wraparound, while the kernel compiles.

numba lowers every signed integer index as Python does: compare it with 0, add the axis'
length, select (``numba.cuda.np.arrayobj.fix_integer_index``).  The kernel never indexes from
the end (its indices are offsets and lane numbers), so for it that is three dead
instructions an access and the array lengths kept live: 28 % of the kernel's machine code
(sm_90, ``tools/kernel_text.py``: 585 KB with it, 422 KB without).  Inside
:func:`non_negative` (this thread only) a signed index is used as it is, as in CUDA C; outside
it numba's lowering is untouched, so other kernels in the process keep Python's semantics.
"""

from __future__ import annotations

import contextlib
import threading

_STATE = threading.local()
_installed = False


def _install() -> None:
    """Wrap numba's index fix-up once; the wrapper defers to numba's unless switched on."""
    global _installed
    if _installed:
        return
    from numba.cuda import cgutils, types
    from numba.cuda.np import arrayobj

    numba_fix = arrayobj.fix_integer_index
    numba_pointer = cgutils.get_item_pointer2

    def fix_integer_index(context, builder, idxty, idx, size):
        if getattr(_STATE, "depth", 0) and idxty.signed:
            return context.cast(builder, idx, idxty, types.intp)
        return numba_fix(context, builder, idxty, idx, size)

    def get_item_pointer2(*args, **kw):
        # the atomics (cuda.atomic.add(sh, (g, k), 1), ...) ask for wraparound here
        if getattr(_STATE, "depth", 0):
            kw["wraparound"] = False
        return numba_pointer(*args, **kw)

    arrayobj.fix_integer_index = fix_integer_index
    cgutils.get_item_pointer2 = get_item_pointer2
    _installed = True


@contextlib.contextmanager
def non_negative():
    """Signed indices compiled without wraparound in this thread while active."""
    _install()
    _STATE.depth = getattr(_STATE, "depth", 0) + 1
    try:
        yield
    finally:
        _STATE.depth -= 1


def compiling_non_negative(kern):
    """``kern`` (a CUDA dispatcher) whose every compile lowers indices without wraparound:
    its own ``compile`` (the launch path and ``kern.compile(sig)`` both go through it)."""
    numba_compile = kern.compile

    def compile(sig):
        with non_negative():
            return numba_compile(sig)

    kern.compile = compile
    return kern
