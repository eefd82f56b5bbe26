"""numba's CPU target, started without its BLAS probe.

numba imports ``numba.np.arraymath`` when it first compiles or loads a CPU function, and that
module checks for a BLAS by importing all of ``scipy.linalg`` (numba calls SciPy's BLAS for
``np.dot`` and ``np.linalg``).  Where SciPy is installed this took 0.49 s of ParMBE's 1.2 s
kernel load on the H100 machine, and 0.15-0.2 s on a 2-core VM (benchmarks/overhead/).  No
kernel of ours calls ``np.dot``, ``@`` or ``np.linalg``, so the engines import numba's array
maths with ``scipy.linalg`` hidden for that one import: numba records that it has no BLAS,
which only changes what njit code calling those functions gets (numba's own fallback or a
typing error), and ``scipy.linalg`` imports as usual afterwards."""

from __future__ import annotations

import importlib.abc
import sys

HIDDEN = "scipy.linalg"


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == HIDDEN or name.startswith(HIDDEN + "."):
            raise ModuleNotFoundError(f"{name} hidden while numba starts", name=name)
        return None


def start_without_blas_probe() -> None:
    """Import ``numba.np.arraymath`` with ``scipy.linalg`` hidden, unless either is
    imported already (then there is nothing to save) or numba is not (a process that never
    imports numba must not start to here)."""
    if ("numba" not in sys.modules or "numba.np.arraymath" in sys.modules
            or HIDDEN in sys.modules):
        return
    finder = _Hide()
    sys.meta_path.insert(0, finder)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        sys.meta_path.remove(finder)
