"""numba's CPU target starts for what a run does (mbebench.numba_cpu): a cached kernel loads
without numba's registries, and a compile does not import scipy.linalg."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_numba_starts_without_importing_scipy_linalg(tmp_path):
    """A stand-in SciPy whose ``linalg`` records its import: a kernel's first load under
    ``jitcache.keyed`` leaves it unimported (numba notes no BLAS), and it imports as usual
    afterwards; a process that never imported numba is left alone."""
    fake = tmp_path / "site" / "scipy"
    (fake / "linalg").mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '1.15.0'\n")
    (fake / "linalg" / "__init__.py").write_text(
        "import os\nopen(os.environ['MARK'], 'a').write('imported\\n')\n")
    (fake / "linalg" / "cython_blas.py").write_text("")
    mark = tmp_path / "mark"
    code = textwrap.dedent("""
        import sys
        from mbebench import numba_cpu
        numba_cpu.start()
        assert "numba" not in sys.modules  # nothing to start in a process without numba
        from numba import njit
        from mbebench.jitcache import keyed

        @keyed
        @njit
        def f(x):
            return x + 1

        assert f(1) == 2
        import numba.np.arraymath as am
        assert am._HAVE_BLAS is False, "numba probed for a BLAS"
        assert "scipy.linalg" not in sys.modules
        import scipy.linalg  # the stand-in, imported as usual afterwards
        print("ok")
    """)
    env = {"PYTHONPATH": f"{tmp_path / 'site'}:{REPO}", "MARK": str(mark),
           "PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(tmp_path / "nbc")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "ok", res.stderr[-2000:]
    assert mark.read_text() == "imported\n"  # once, and only when asked for


LOAD = """
import sys
from numba import njit
from mbebench.jitcache import keyed

@keyed
@njit(cache=True)
def total(a):
    s = 0
    for x in a:
        s += x
    return s, np.empty(3)  # an array made in njit code: numba's runtime is needed

import numpy as np
print(total(np.arange(5))[0])
print(*(int(m in sys.modules)
        for m in ("numba.np.arraymath", "numba.np.polynomial.polynomial_functions")))

@njit
def twice(x):  # not cached: compiled here, after the loads
    return 2 * x

print(twice(21))
"""


def test_a_cached_kernel_loads_without_numbas_registries_and_a_compile_still_works(tmp_path):
    """The first process compiles and stores the kernel (numba's registries loaded: its
    compiler refreshes the target); the second loads it from the cache with numba's runtime
    alone (no typing or lowering module imported), gets the same answer, and compiles a new
    function afterwards as usual."""
    (tmp_path / "kern.py").write_text(LOAD)
    env = {"PYTHONPATH": f"{tmp_path}:{REPO}", "PATH": "/usr/bin:/bin",
           "NUMBA_CACHE_DIR": str(tmp_path / "nbc")}
    runs = [subprocess.run([sys.executable, "kern.py"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=120) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    assert runs[0].stdout.split() == ["10", "1", "1", "42"]  # compiled: registries loaded
    assert runs[1].stdout.split() == ["10", "0", "0", "42"]  # loaded: none of them
