"""Order-free 64-bit fingerprint of a set of maximal bicliques.

Every engine must report the same value for the same graph, so the definition
lives here once.  It is built only from sums (mod 2**64) of a bijective mixer,
which makes it independent of the order in which bicliques are found *and* of
the order of vertices inside a biclique: a GPU thread block can accumulate the
hash of L' while it builds L', without ever sorting it.

Definition (all arithmetic mod 2**64, ``mix`` = splitmix64 finaliser):

    left_elem(u)  = mix(2*u + 1)          u: id on the left side (CSR "left")
    right_elem(v) = mix(2*v + 2)          v: id on the right side
    SA = sum(left_elem(u) for u in A);  SB = sum(right_elem(v) for v in B)
    biclique_hash(A, B) = mix(SA ^ mix(SB + K))
    fingerprint = sum(biclique_hash(A, B) for each maximal biclique (A, B))

Left/right always refer to the sides of the graph as stored in the CSR file,
whatever side an engine chooses to enumerate from.

The kernels below are plain Python over ``np.uint64`` so that the same source
compiles for every target: ``left_elem_nb``/``right_elem_nb``/``combine_nb``
are the ``numba.njit`` builds for the CPU engines, and
``compile_with(cuda.jit(device=True))`` builds the device functions for cuMBE.
The ``*_py`` twins use Python ints and serve as the reference.
"""

from __future__ import annotations

import types
from collections.abc import Iterable

import numba
import numpy as np

from mbebench.fingerprint_sum import MASK64 as MASK
from mbebench.fingerprint_sum import from_hex, to_hex  # noqa: F401  (re-exported)
_M1 = 0xBF58476D1CE4E5B9
_M2 = 0x94D049BB133111EB
_K = 0x9E3779B97F4A7C15

# numba needs typed constants: a bare int literal would make uint64 arithmetic
# fall back to float64 (uint64 op int64 -> float64 in numba's type rules).
U1 = np.uint64(1)
U2 = np.uint64(2)
S27 = np.uint64(27)
S30 = np.uint64(30)
S31 = np.uint64(31)
M1 = np.uint64(_M1)
M2 = np.uint64(_M2)
K = np.uint64(_K)


def mix(z):
    z = (z ^ (z >> S30)) * M1
    z = (z ^ (z >> S27)) * M2
    return z ^ (z >> S31)


def left_elem(u):
    return mix(np.uint64(u) * U2 + U1)


def right_elem(v):
    return mix(np.uint64(v) * U2 + U2)


def combine(sum_left, sum_right):
    """Hash of one biclique from the sums of its element hashes."""
    return mix(sum_left ^ mix(sum_right + K))


def combine_sides(sum_a, sum_b, a_is_left):
    """``combine`` for an engine that enumerates from side a, whichever CSR side that is."""
    if a_is_left:
        return combine(sum_a, sum_b)
    return combine(sum_b, sum_a)


_KERNELS = ("mix", "left_elem", "right_elem", "combine", "combine_sides")


def compile_with(jit) -> types.SimpleNamespace:
    """Compile the kernels with ``jit`` so that they call each other's compiled
    versions (numba resolves callees through the function's globals)."""
    scope = dict(globals())
    out = {}
    for name in _KERNELS:
        fn = types.FunctionType(globals()[name].__code__, scope, name)
        out[name] = scope[name] = jit(fn)
    return types.SimpleNamespace(**out)


_cpu = compile_with(numba.njit(inline="always"))
mix_nb = _cpu.mix
left_elem_nb = _cpu.left_elem
right_elem_nb = _cpu.right_elem
combine_nb = _cpu.combine
combine_sides_nb = _cpu.combine_sides


# --- reference implementation on Python ints ---------------------------------


def mix_py(z: int) -> int:
    z &= MASK
    z = ((z ^ (z >> 30)) * _M1) & MASK
    z = ((z ^ (z >> 27)) * _M2) & MASK
    return z ^ (z >> 31)


def biclique_hash_py(left: Iterable[int], right: Iterable[int]) -> int:
    sa = sum(mix_py(2 * int(u) + 1) for u in left) & MASK
    sb = sum(mix_py(2 * int(v) + 2) for v in right) & MASK
    return mix_py(sa ^ mix_py((sb + _K) & MASK))


def fingerprint_py(bicliques: Iterable[tuple[Iterable[int], Iterable[int]]]) -> int:
    total = 0
    for left, right in bicliques:
        total = (total + biclique_hash_py(left, right)) & MASK
    return total
