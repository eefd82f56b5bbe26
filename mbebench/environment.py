"""The machine and software a run ran on, recorded in every result row (``env``).

Gathered by the runner's parent process before the engine's child starts (once for
all the items, e.g. shards, that the child runs), so none of it is timed and none of
it shares the machine with a timed run.  It
imports no engine code: the package versions come from the installed
distributions' metadata (a few milliseconds), the CUDA driver's version from
``libcuda`` through ctypes (no ``cuInit``, no context), and the GPU's name and
driver from ``nvidia-smi`` when it is on the ``PATH`` (a fraction of a second on a GPU
machine, nothing elsewhere).  Every field is ``None`` when it cannot be found.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import shutil
import subprocess
from importlib import metadata
from typing import Any

PACKAGES = ("numba", "numba-cuda", "numpy", "llvmlite", "cuda-bindings")
NVIDIA_SMI_TIMEOUT_S = 15.0


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """The first ``model name`` of /proc/cpuinfo (x86), else ``platform.processor()``."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep and key.strip() in ("model name", "Model", "cpu model"):
                    return " ".join(value.split()) or None
    except OSError:
        pass
    return platform.processor() or None


def cpus_allowed() -> int | None:
    """CPUs this process may run on (a SLURM job or taskset may allow fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def package_versions(names=PACKAGES) -> dict[str, str | None]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def cuda_driver_version() -> str | None:
    """The CUDA version the installed driver supports (``cuDriverGetVersion``), e.g. "12.8"."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        version = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
            return None
    except (OSError, AttributeError):
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


def gpus(nvidia_smi: str | None = None) -> list[dict[str, str]]:
    """[{name, driver, memory}] of the GPUs ``nvidia-smi`` lists; [] without it or without GPUs."""
    exe = nvidia_smi or shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        res = subprocess.run(
            [exe, "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    if res.returncode != 0:
        return []
    out = []
    for line in res.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0]:
            out.append({"name": parts[0], "driver": parts[1],
                        "memory": parts[2] if len(parts) > 2 else None})
    return out


@functools.lru_cache(maxsize=1)
def environment() -> dict[str, Any]:
    """The ``env`` field of a result row (cached: it does not change within a process)."""
    found = gpus()
    names = sorted({g["name"] for g in found})
    drivers = sorted({g["driver"] for g in found})
    versions = package_versions()
    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_allowed": cpus_allowed(),
        "gpu": " / ".join(names) or None,
        "gpu_count": len(found),
        "gpu_driver": " / ".join(drivers) or None,
        "cuda_driver": cuda_driver_version(),
        "python": platform.python_version(),
        **{name.replace("-", "_"): version for name, version in versions.items()},
    }


def describe(env: dict[str, Any] | None) -> str:
    """One line for the tables: CPU (cores), GPU (driver, CUDA), numba / numba-cuda."""
    if not env:
        return "unknown environment"
    cpu = env.get("cpu_model") or "unknown CPU"
    parts = [f"{cpu} ({env.get('cpu_count') or '?'} logical cores)"]
    if env.get("gpu"):
        extra = ", ".join(x for x in (
            f"driver {env['gpu_driver']}" if env.get("gpu_driver") else "",
            f"CUDA {env['cuda_driver']}" if env.get("cuda_driver") else "") if x)
        parts.append(f"{env['gpu']}" + (f" ({extra})" if extra else ""))
    else:
        parts.append("no GPU")
    sw = ", ".join(f"{name} {env[key]}" for name, key in (
        ("numba", "numba"), ("numba-cuda", "numba_cuda")) if env.get(key))
    if sw:
        parts.append(sw)
    return "; ".join(parts)
