"""Environment variables: one prefix, ``MBEBENCH_``.

Earlier versions read some of them under ``CUMBE_`` or ``MBE_``; :func:`get` still reads
the old name when the new one is not set, and says once per process which name to use.
"""

from __future__ import annotations

import os
import sys

# the variables a user may set, and what each does (docs/configuration.md lists them)
VARIABLES = {
    "MBEBENCH_PROGRESS_S": "seconds between two progress lines of a run (default 10; 0: none)",
    "MBEBENCH_CUMBE_PROGRESS_S": "cuMBE's own progress interval, over MBEBENCH_PROGRESS_S",
    "MBEBENCH_DEVICE_MEMORY_GIB": "cap on the device memory a cuMBE run uses, in GiB, where "
                                  "the config's device_memory_gib is null",
    "MBEBENCH_PREP_CACHE": "0: cuMBE neither reads nor writes its preparation cache beside "
                           "the CSR file",
    "MBEBENCH_FAST_LAUNCH": "0: cuMBE always loads its kernel through numba, never from its "
                            "cached cubin through the driver API (cumbe/cubin.py)",
    "MBEBENCH_FAST_LAUNCH_VERBOSE": "1: cuMBE says on stderr whether it launched its cached "
                                    "cubin, and if not, why",
    "MBEBENCH_CUBIN_CACHE": "the folder of cuMBE's cached cubins (default $NUMBA_CACHE_DIR/"
                            "cumbe-cubin, else cumbe/kernel/__pycache__/cubin)",
    "MBEBENCH_PARMBE_AOT": "0: ParMBE runs numba's JIT kernels, never builds or loads its "
                           "ahead-of-time compiled ones (baselines/parmbe_aot.py; cached in "
                           "$NUMBA_CACHE_DIR/parmbe-aot, else baselines/__pycache__/parmbe-aot)",
    "MBEBENCH_SIM_DEVICES": "devices the CUDA simulator pretends to have (default 1)",
    "MBEBENCH_ENGINES_DIR": "where the published codes are built (default resources/engines)",
    "MBEBENCH_SHARED": "the tests' shared data folder (default ../shared beside the checkout)",
    "MBEBENCH_REQUIRE": "the tests' needs (mirror, slurm, latex) whose absence fails instead "
                        "of skipping",
    "MBEBENCH_SLURM_AUTH": "the tests' SLURM cluster authentication (none or munge)",
}
# new name -> the name earlier versions read
OLD_NAMES = {
    "MBEBENCH_DEVICE_MEMORY_GIB": "CUMBE_DEVICE_MEMORY_GIB",
    "MBEBENCH_CUMBE_PROGRESS_S": "CUMBE_PROGRESS_S",
    "MBEBENCH_PREP_CACHE": "CUMBE_PREP_CACHE",
    "MBEBENCH_SIM_DEVICES": "CUMBE_SIM_DEVICES",
    "MBEBENCH_TEST_CB_CAP": "CUMBE_TEST_CB_CAP",
    "MBEBENCH_TEST_UNCLAMPED_GRID": "CUMBE_TEST_UNCLAMPED_GRID",
    "MBEBENCH_TEST_DEVICE_FAULT": "CUMBE_TEST_DEVICE_FAULT",
    "MBEBENCH_SHARED": "MBE_SHARED",
    "MBEBENCH_SLURM_AUTH": "MBE_SLURM_AUTH",
}
_warned: set[str] = set()


def flag(name: str) -> bool:
    """Whether the switch ``name`` is on: set (under its name or, as :func:`get` reads it, its
    old one), and neither empty nor "0" (numba's rule for its own switches, which the build
    switches of cuMBE follow)."""
    return (get(name) or "") not in ("", "0")


def simulating() -> bool:
    """Whether numba's CUDA simulator is on in this process (``NUMBA_ENABLE_CUDASIM``)."""
    return flag("NUMBA_ENABLE_CUDASIM")


def get(name: str, default: str | None = None) -> str | None:
    """``os.environ[name]``, else its old name's value (with a one-time note on stderr),
    else ``default``."""
    if name in os.environ:
        return os.environ[name]
    old = OLD_NAMES.get(name)
    if old is not None and old in os.environ:
        if old not in _warned:
            _warned.add(old)
            print(f"note: {old} is read for now; its name is {name}", file=sys.stderr)
        return os.environ[old]
    return default
