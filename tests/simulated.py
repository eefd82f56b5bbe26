"""A child Python under numba's CUDA simulator, for the tests that run kernels: the switch must
be on before numba is imported, so it takes a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_simulated(code: str, timeout: float, *, clean_numba: bool = False,
                  **env: str) -> subprocess.CompletedProcess:
    """``python -c code`` from the repo root, the simulator on, ``env`` set on top, output
    captured; ``clean_numba``: none of this process's other NUMBA_ variables."""
    base = {k: v for k, v in os.environ.items()
            if not (clean_numba and k.startswith("NUMBA_"))}
    full = dict(base, NUMBA_ENABLE_CUDASIM="1", **env,
                PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=full, capture_output=True,
                          text=True, timeout=timeout)
