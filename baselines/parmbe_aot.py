"""ParMBE's kernels compiled ahead of time: a CPython extension module that imports without
numba, built once per key into a cache folder and loaded by every later run.

Why: a warm ParMBE-16 call spent 0.6 s of its 0.66 s beside the algorithm on the H100
machine importing numba (0.26-0.39 s there) and loading the kernels from numba's cache
(benchmarks/overhead/README.md); the extension loads in about a millisecond.

* :func:`kernels` is what ParMBE's planner, its search and its workers call (through
  :class:`Aot` or :class:`Jit`, the same five functions): the extension when :func:`load`
  finds one, else (once per key) :func:`build` makes it, else numba's JIT kernels as before.
* the key (:func:`key`): the bytes of every repository module the kernels import
  (:func:`mbebench.jitcache.imports_digest`, which includes this module and the exports'
  signatures), the ``_version.py`` of numba and llvmlite, numpy's version, the interpreter
  (version, ABI tag, extension suffix), the platform and the CPU (/proc/cpuinfo's model and
  feature flags: what LLVM's host CPU name and features are derived from; LLVM itself cannot
  be asked without importing it) and the ``NUMBA_*`` environment.  The file's name carries it
  (:func:`entry_path`), so an edited source or another machine never loads stale code.
* the build (:mod:`baselines._parmbe_aot_exports`, with ``numba.pycc``) runs in a process of
  its own, into a temporary folder renamed into place, under a lock file: two processes
  building at once compile once and never see a half-written file.  A failed build (no C
  compiler, a pycc error) is said once on stderr in one line and leaves a marker
  (``<entry>.failed``) so that later runs take the JIT path without trying again; remove it
  to retry.  ``MBEBENCH_PARMBE_AOT=0`` turns the whole path off.
* the extension exports the engine's search only (the skip flags on, no work counters);
  the work analysis (``benchmarks/cpu/work_analysis.py``) keeps numba's JIT kernels.

The cache folder: ``$NUMBA_CACHE_DIR/parmbe-aot``, else ``baselines/__pycache__/parmbe-aot``
(beside numba's own cache, as :func:`cumbe.cubin.cache_dir`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from mbebench import envvars

ENV = "MBEBENCH_PARMBE_AOT"  # "0": numba's JIT kernels only
FORMAT = 1
ROOT = Path(__file__).resolve().parents[1]
# what the extension compiles in: the kernels' modules and the exports (their imports follow)
SOURCES = ("baselines._parmbe_kernel", "baselines._parmbe_plan_kernel",
           "baselines._parmbe_aot_exports")

# The exported functions: argument types, return type.  "int32[:]" is a C-contiguous 1-d
# array, "int64[:]r" a read-only one (the graph's arrays: parmbe_plan.oriented); bare names
# are scalars.  These are the types the engine passes (parmbe_plan._Prepared, plan_tasks,
# _shard_plan); :class:`Aot` checks every array against them, since an extension's wrapper
# checks only the item size and would read a float32 array as int32 without a word.
_G = ("int64[:]r", "int32[:]r", "int64[:]r", "int32[:]r", "int32[:]")  # uo ui vo vi rank
EXPORTS = {
    "run_tasks": (_G + ("int32[:]", "int32[:]", "int32[:]", "boolean",
                        "int32[:]", "int32[:]", "int32[:]", "int32[:]"), "(int64, uint64)"),
    "tail_estimates": (_G + ("int64", "int64", "int64[:]"), "void"),
    "tail_sizes": (_G + ("int32[:]", "int32[:]", "int32[:]"), "int64[:]"),
    "build_tasks": (("int32[:]", "float64[:]", "int32[:]", "float64", "int64"),
                    "(int32[:], int32[:], int32[:], int32[:])"),
    "item_bounds": (("int32[:]", "float64[:]", "float64", "int64"), "int32[:]"),
}


def enabled() -> bool:
    return (envvars.get(ENV) or "1").strip() != "0"


def cache_dir() -> Path:
    from mbebench.jitcache import beside_numba_cache

    return beside_numba_cache("parmbe-aot", ROOT / "baselines" / "__pycache__" / "parmbe-aot")


def _version_file(package: str) -> str:
    """sha256 of ``package``'s ``_version.py`` (its version and revision), found without
    importing the package."""
    try:
        spec = importlib.util.find_spec(package)
        return hashlib.sha256(
            (Path(spec.origin).parent / "_version.py").read_bytes()).hexdigest()
    except (AttributeError, TypeError, OSError, ValueError, ImportError):
        return "none"


_CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags",
               "CPU implementer", "CPU architecture", "CPU variant", "CPU part", "Features",
               "isa", "cpu")


def _cpu() -> dict:
    """The first processor's model and features from /proc/cpuinfo (what LLVM's host CPU
    name and feature flags come from); elsewhere the platform module's words."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            block = f.read().split("\n\n", 1)[0]
    except OSError:
        import platform

        return {"processor": platform.processor(), "machine": platform.machine()}
    out = {}
    for line in block.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in _CPU_FIELDS:
            out[name.strip()] = value.strip()
    return out


def key() -> dict:
    """Everything the extension's machine code depends on (see the module's docstring)."""
    from mbebench.jitcache import imports_digest, numba_environment

    return {
        "format": FORMAT,
        "sources": imports_digest(*SOURCES),
        "numba": _version_file("numba"), "llvmlite": _version_file("llvmlite"),
        "numpy": np.__version__,
        "python": [sys.version, sys.implementation.cache_tag,
                   importlib.machinery.EXTENSION_SUFFIXES[0]],
        "platform": [sys.platform, os.uname().machine if hasattr(os, "uname") else ""],
        "cpu": _cpu(),
        "numba_env": numba_environment(),
    }


def module_name(k: dict | None = None) -> str:
    """The extension's module name, which carries the key (the file's name follows it)."""
    from mbebench.jitcache import key_digest

    return f"parmbe_aot_{key_digest(k or key())}"


def entry_path(name: str | None = None) -> Path:
    name = name or module_name()
    return cache_dir() / (name + importlib.machinery.EXTENSION_SUFFIXES[0])


def load(name: str | None = None):
    """The extension for this key, imported (without numba); None when the cache holds none
    or it does not import."""
    name = name or module_name()
    if name in sys.modules:
        return sys.modules[name]
    path = entry_path(name)
    if not path.is_file():
        return None
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except (ImportError, OSError) as e:
        _warn(f"the ahead-of-time kernels at {path} do not load ({e}); numba's JIT runs")
        return None
    sys.modules[name] = mod
    return mod


def _warn(text: str) -> None:
    print(f"parmbe: {text}", file=sys.stderr, flush=True)


def _build_command(name: str, out: Path) -> list[str]:
    return [sys.executable, "-m", "baselines._parmbe_aot_exports", "--name", name,
            "--out", str(out)]


_BUILD_LOCK = threading.Lock()  # flock is per open file: threads of one process need this


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive lock on ``path`` (a lock file), between threads and processes."""
    from mbebench.jitcache import file_lock

    with _BUILD_LOCK, file_lock(path):
        yield


def build(name: str | None = None) -> Path | None:
    """Build the extension for this key into the cache (unless it is there, or an earlier
    build of this key failed); its path, or None after a failure, which is said on stderr
    once (and marked, see the module's docstring)."""
    name = name or module_name()
    final = entry_path(name)
    try:
        with _locked(final.with_name(name + ".lock")):
            return _build_locked(name, final)
    except OSError as e:  # a cache folder we may not write: a run must not fail for it
        _warn(f"the ahead-of-time kernels were not built ({e}); numba's JIT runs")
        return None


def _build_locked(name: str, final: Path) -> Path | None:
    import shutil

    from mbebench import atomic

    failed = final.with_name(name + ".failed")
    if final.is_file():
        return final
    if failed.is_file():
        return None
    atomic.remove_stale_temps(final)  # what a killed build left (we hold the lock)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        t0 = time.perf_counter()
        env = {**os.environ, "TMPDIR": str(tmp),  # pycc's own build folder goes there
               # the sources the key was read from, whatever the caller's path
               "PYTHONPATH": os.pathsep.join(
                   [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
        proc = subprocess.run(_build_command(name, tmp), cwd=ROOT, env=env,
                              capture_output=True, text=True)
        built = tmp / final.name
        if proc.returncode == 0 and built.is_file():
            meta = tmp / (name + ".json")
            if meta.is_file():  # the build's record; the extension, renamed last, is the entry
                os.replace(meta, final.with_name(meta.name))
            os.replace(built, final)
            return final
        why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        if proc.returncode > 0:  # an error, not a kill: do not try again for this key
            atomic.write_text(failed, proc.stderr[-20000:] or why)
        _warn(f"the ahead-of-time kernels did not build in {time.perf_counter() - t0:.0f} s"
              f" ({why[:300]}); numba's JIT runs (remove {failed} to try again)")
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Aot:
    """The extension's functions, each checking its arrays' types first."""

    kind = "aot"

    def __init__(self, module):
        self.module = module
        for fname, (args, _) in EXPORTS.items():
            setattr(self, fname, _checked(getattr(module, fname), fname, args))


def _checked(fn, fname: str, args: tuple):
    arrays = [(i, np.dtype(a.split("[")[0])) for i, a in enumerate(args) if "[" in a]

    def call(*a):
        for i, dt in arrays:
            x = a[i]
            if not (isinstance(x, np.ndarray) and x.dtype == dt and x.ndim == 1
                    and x.flags.c_contiguous):
                raise TypeError(f"{fname}: argument {i} must be a C-contiguous 1-d {dt} array,"
                                f" not {getattr(x, 'dtype', type(x).__name__)}"
                                f"{getattr(x, 'shape', '')}")
        return fn(*a)

    return call


class Jit:
    """numba's JIT kernels under the extension's names (the search without counters)."""

    kind = "jit"

    def __init__(self):
        from baselines import _parmbe_kernel as search
        from baselines import _parmbe_plan_kernel as plan

        self._search = search.run_tasks
        for fname in EXPORTS:
            if fname != "run_tasks":
                setattr(self, fname, getattr(plan, fname))

    def run_tasks(self, *args):
        return self._search(*args, None)


_KERNELS: Aot | Jit | None = None


def kernels() -> Aot | Jit:
    """This process's kernels (chosen once; forked workers inherit the choice): the
    extension, built first if this key has none; numba's JIT kernels when the path is off
    (``MBEBENCH_PARMBE_AOT=0``) or the build failed."""
    global _KERNELS
    if _KERNELS is None:
        mod = None
        if enabled():
            name = module_name()
            mod = load(name)
            # a file that is there but does not load was said by load(); building is no cure
            if mod is None and not entry_path(name).is_file() and build(name) is not None:
                mod = load(name)
        _KERNELS = Aot(mod) if mod is not None else Jit()
    return _KERNELS
