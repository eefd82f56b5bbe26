"""numba's CPU target, started for what a run does: load cached kernels.

Two costs of numba's start that none of our runs needs, measured on ParMBE's start
(benchmarks/overhead/):

* **The registries on a cache hit.**  Before loading a cached function numba refreshes the
  target: it imports some 60 modules of numba's own typing and lowering (strings, sets,
  dicts, random numbers, polynomials, ...) and registers them, 0.08 s on a 2-core VM and
  about 0.3 s on the H100 machine.  Loading machine code from the cache needs none of that,
  only numba's runtime (NRT, which the loaded code calls to allocate arrays); compiling
  does, and numba's compiler refreshes the target itself before every compile.  So a
  cached load here starts the runtime only, and a cache miss compiles as usual.
* **The BLAS probe.**  The first refresh imports ``numba.np.arraymath``, which checks for a
  BLAS by importing all of ``scipy.linalg`` (numba calls SciPy's BLAS for ``np.dot`` and
  ``np.linalg``): 0.49 s on the H100 machine where SciPy is installed.  No kernel of ours
  calls ``np.dot``, ``@`` or ``np.linalg``, so that refresh runs with ``scipy.linalg``
  hidden: numba records that it has no BLAS, which only changes what njit code calling
  those functions gets (numba's own fallback or a typing error), and ``scipy.linalg``
  imports as usual afterwards.

Both are patches of numba's CPU classes, installed once by :func:`start` (called by
``mbebench.jitcache.keyed``, so by every kernel's module), and only in a process that has
imported numba already.  The CUDA target's loads are left as numba does them."""

from __future__ import annotations

import importlib.abc
import sys

HIDDEN = "scipy.linalg"
_started = False


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == HIDDEN or name.startswith(HIDDEN + "."):
            raise ModuleNotFoundError(f"{name} hidden while numba starts", name=name)
        return None


def _registries_without_blas_probe(load):
    """``CPUContext.load_additional_registries`` whose first call (the one importing
    ``numba.np.arraymath``) runs with ``scipy.linalg`` hidden, unless it is imported already
    (then there is nothing to save)."""

    def load_additional_registries(self):
        if "numba.np.arraymath" in sys.modules or HIDDEN in sys.modules:
            return load(self)
        finder = _Hide()
        sys.meta_path.insert(0, finder)
        try:
            return load(self)
        finally:
            sys.meta_path.remove(finder)

    return load_additional_registries


def _load_without_registries(load_overload, cpu_context):
    """``Cache.load_overload`` that, for the CPU target, starts numba's runtime instead of
    refreshing the whole target (a miss then compiles, and the compiler refreshes)."""

    def load(self, sig, target_context):
        if not isinstance(target_context, cpu_context):
            return load_overload(self, sig, target_context)
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    return load


def start() -> None:
    """Install both patches (once), unless numba is not imported: a process that never
    imports numba must not start it here."""
    global _started
    if _started or "numba" not in sys.modules:
        return
    from numba.core import caching
    from numba.core.cpu import CPUContext

    CPUContext.load_additional_registries = _registries_without_blas_probe(
        CPUContext.load_additional_registries)
    caching.Cache.load_overload = _load_without_registries(caching.Cache.load_overload,
                                                           CPUContext)
    _started = True
