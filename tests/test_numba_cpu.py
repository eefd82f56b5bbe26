"""numba's CPU target starts without importing scipy.linalg (mbebench.numba_cpu)."""

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
        numba_cpu.start_without_blas_probe()
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
