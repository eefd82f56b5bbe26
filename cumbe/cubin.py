"""cuMBE's kernel launched from a cached cubin through the CUDA driver API, without numba.

A warm ``python -m cumbe run`` spent 0.8-1.2 s loading the kernel through numba's
dispatcher (numba's CUDA target starting) and 0.5-1 s importing numba and numba-cuda, for a
kernel that numba had compiled before (docs/gpu.md, "Seconds beside the kernel").  So:

* the first run of a build (variant, threads, pieces, layout, instrumentation) compiles it
  through numba as always, and :func:`store` writes the linked cubin and a small metadata
  file (the kernel's mangled name, its argument layout, the key below) into the cache
  folder (:func:`cache_dir`), atomically;
* a later run of that build (:func:`driver_for_run`, then :meth:`Driver.kernel`) loads the
  cubin with ``cuModuleLoadData`` and launches it with ``cuLaunchCooperativeKernel``
  through cuda-python's ``cuda.bindings.driver``; :class:`Driver` offers the few calls of
  numba's ``cuda`` module that a run makes (:mod:`cumbe.single_device`, :mod:`cumbe.launch`,
  :mod:`cumbe.buffers`, :mod:`cumbe.progress`), so both paths run the same host code.

The key: the build's switches, the device's compute capability, the numba-cuda version,
the toolkit (``CUDA_HOME``, the NVIDIA wheels installed), the ``NUMBA_*`` environment and a
digest of every module the kernel imports
(:func:`mbebench.jitcache.imports_digest`, read from the files).  An entry that does not
match it, or whose cubin does not match its recorded digest, is ignored (and rewritten by
the next compile), never trusted.  Any doubt is the numba path: ``MBEBENCH_FAST_LAUNCH=0``,
the CUDA simulator, a debug build switch (``cumbe.consts.BUILD_ENV``), numba's CUDA target
already started in the process, no ``cuda.bindings``, or no cache entry.
``MBEBENCH_FAST_LAUNCH_VERBOSE=1`` says on stderr which path a run took and why.

Argument passing follows numba-cuda's ``_Kernel._prepare_args`` (numba-cuda 0.30): every
array argument is flattened into (meminfo, parent, nitems, itemsize, data pointer,
shape[ndim], strides[ndim]), each a 64-bit word (the kernel's PTX declares 172 ``.u64``
parameters for its 22 array arguments); tests/test_cumbe_cubin.py checks :func:`flatten` against
numba's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import weakref
from pathlib import Path

import numpy as np

from cumbe import driver_start
from cumbe.consts import BUILD_ENV
from mbebench import atomic
from mbebench import envvars

FAST_ENV = "MBEBENCH_FAST_LAUNCH"  # "0": always through numba
VERBOSE_ENV = "MBEBENCH_FAST_LAUNCH_VERBOSE"
CACHE_ENV = "MBEBENCH_CUBIN_CACHE"  # the cache folder (default: cache_dir)
FORMAT = 1
ROOT = Path(__file__).resolve().parents[1]


def note(text: str) -> None:
    if envvars.flag(VERBOSE_ENV):
        print(f"cumbe: {text}", file=sys.stderr, flush=True)


def enabled() -> bool:
    """Whether this process may launch from, and fill, the cubin cache."""
    if (envvars.get(FAST_ENV) or "1").strip() == "0":
        return False
    if envvars.simulating():
        return False
    return not any(envvars.flag(n) for n in BUILD_ENV)


def cache_dir() -> Path:
    """``MBEBENCH_CUBIN_CACHE``; else beside numba's cache: ``$NUMBA_CACHE_DIR/cumbe-cubin``,
    or the kernel package's ``__pycache__/cubin``."""
    from mbebench.jitcache import beside_numba_cache

    if envvars.get(CACHE_ENV):
        return Path(envvars.get(CACHE_ENV))
    return beside_numba_cache("cumbe-cubin", ROOT / "cumbe" / "kernel" / "__pycache__" / "cubin")


def _numba_cuda_version() -> str:
    """numba-cuda's version, from its VERSION file (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("numba_cuda")
    if spec is None or not spec.origin:
        return "none"
    try:
        return (Path(spec.origin).parent / "VERSION").read_text().strip()
    except OSError:
        return "unknown"


def _toolkit() -> list[str]:
    """What numba compiles and links with, as far as it shows without importing numba: the
    ``CUDA_HOME``/``CUDA_PATH`` settings and the installed NVIDIA wheels (NVVM, nvJitLink,
    the CUDA runtime's libraries) with their versions."""
    out = [f"{k}={os.environ[k]}" for k in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(k)]
    for d in sys.path:
        if d.endswith("site-packages") and os.path.isdir(d):
            out += sorted(n for n in os.listdir(d)
                          if n.startswith("nvidia_") and n.endswith(".dist-info"))
    return out


def build_key(build: dict, cc: tuple) -> dict:
    """Everything the cached machine code depends on (see the module's docstring)."""
    from mbebench.jitcache import imports_digest, numba_environment

    return {
        "format": FORMAT, "build": {k: build[k] for k in sorted(build)},
        "cc": [int(cc[0]), int(cc[1])], "numba_cuda": _numba_cuda_version(),
        "toolkit": _toolkit(),
        "numba_env": numba_environment(),
        "sources": imports_digest("cumbe.kernel", "cumbe.buffers"),
    }


def _entry_path(key: dict) -> Path:
    from mbebench.jitcache import key_digest

    return cache_dir() / f"cumbe-{key_digest(key)}"


def arg_layout() -> list:
    """The kernel's arguments as (name, dtype, ndim), from the one description of the
    buffers (:data:`cumbe.buffers.SPEC`)."""
    from cumbe import buffers

    dummy = buffers.Plan(1, 1, 1, 1, 1, 1, 1, 2)
    return [[b.name, np.dtype(b.dtype).str, len(b.shape(dummy))] for b in buffers.SPEC]


def cubin_bytes(code) -> bytes | None:
    """The bytes of what numba's linker returned: bytes in some releases, a cuda.core
    ``ObjectCode`` holding them in others (as numba-cuda 0.30.4 gave on an H100 machine's
    image); None for anything else (e.g. an ObjectCode naming a file)."""
    if isinstance(code, (bytes, bytearray, memoryview)):
        return bytes(code)
    inner = getattr(code, "code", None)
    if isinstance(inner, (bytes, bytearray, memoryview)) and getattr(code, "code_type",
                                                                       "cubin") == "cubin":
        return bytes(inner)
    return None


def store(build: dict, cc: tuple, overload) -> Path | None:
    """Write the cubin of numba's compiled ``overload`` (``kern.compile(sig)``) for ``build``
    on a device of compute capability ``cc``; None (and nothing written) when the kernel
    needs more than its cubin (linked files, module setup, debug) or the folder cannot be
    written."""
    lib = overload._codelibrary
    if lib._linking_files or lib._setup_functions or getattr(overload, "debug", False):
        note("cubin cache: this build needs more than its cubin; not stored")
        return None
    types = [(str(t.dtype), t.ndim, t.layout) for t in overload.signature.args]
    expected = [(str(np.dtype(d)), n, "C") for _, d, n in arg_layout()]
    if types != expected:
        note(f"cubin cache: argument types {types} are not the buffers' {expected}")
        return None
    key = build_key(build, cc)
    cubin = cubin_bytes(lib.get_cubin(cc=tuple(cc)))
    if cubin is None:
        note("cubin cache: numba's linker gave no cubin bytes; not stored")
        return None
    found = load(build, cc, quiet=True)
    if found is not None and found[1] == cubin and found[0]["entry"] == lib._entry_name:
        return _entry_path(key)  # stored already (a run that took numba's path anyway)
    meta = {"key": key, "entry": lib._entry_name, "args": arg_layout(),
            "cooperative": bool(overload.cooperative),
            "cubin_sha256": hashlib.sha256(cubin).hexdigest()}
    path = _entry_path(key)
    try:
        with atomic.atomic_path(path.with_suffix(".cubin")) as tmp:
            tmp.write_bytes(cubin)
        atomic.write_json(path.with_suffix(".json"), meta)  # last: it makes the entry valid
    except OSError as e:
        note(f"cubin cache: not written ({e})")
        return None
    return path


def load(build: dict, cc: tuple, quiet: bool = False) -> tuple[dict, bytes] | None:
    """(metadata, cubin) of ``build`` for compute capability ``cc`` if the cache holds an
    entry that matches in every part; else None."""
    key = build_key(build, cc)
    path = _entry_path(key)
    try:
        meta = json.loads(path.with_suffix(".json").read_text())
        cubin = path.with_suffix(".cubin").read_bytes()
    except (OSError, ValueError):
        if not quiet:
            note(f"cubin cache: no entry for {build} at {path}")
        return None
    if (not isinstance(meta, dict) or meta.get("key") != key or meta.get("args") != arg_layout()
            or meta.get("cubin_sha256") != hashlib.sha256(cubin).hexdigest()
            or not isinstance(meta.get("entry"), str)):
        note(f"cubin cache: the entry at {path} does not match this build; ignored")
        return None
    return meta, cubin


def flatten(arrays) -> list[int]:
    """The kernel's parameter words for ``arrays`` (device arrays, in the kernel's order), as
    numba-cuda's ``_prepare_args`` makes them: meminfo and parent (0), the element count,
    the item size, the data pointer, the shape, the strides (C order)."""
    words: list[int] = []
    for a in arrays:
        itemsize = np.dtype(a.dtype).itemsize
        strides, step = [], itemsize
        for n in reversed(a.shape):
            strides.append(step)
            step *= n
        words += [0, 0, int(a.size), itemsize, int(a.ptr), *map(int, a.shape),
                  *reversed(strides)]
    return words


def driver_for_run() -> Driver | None:
    """The numba-free driver for this run, or None for numba's path: the fast launch is
    off (:func:`enabled`), numba's CUDA target is started in this process already (its
    context and arrays stay numba's), cuda-python is missing or the driver has no device."""
    global _DRIVER
    driver_start.wait()  # started early (python -m cumbe run): Driver() is cheap after it
    if not enabled():
        return None
    if "numba.cuda" in sys.modules:
        note("numba.cuda is imported already: the numba path")
        return None
    try:
        if _DRIVER is None:  # one per process: repeats reuse its context and loaded kernels
            _DRIVER = Driver()
        else:  # current in this thread too
            _check(_drv().cuCtxSetCurrent(_DRIVER.context.handle))
        return _DRIVER
    except Exception as e:  # noqa: BLE001 - numba's path reports the device's state itself
        note(f"no driver launch ({type(e).__name__}: {e}): the numba path")
        return None


_DRIVER: Driver | None = None


# ---------------------------------------------------------------- the driver API, as numba's


class CudaAPIError(RuntimeError):
    """A failed driver call; named as numba-cuda's, so that :mod:`cumbe.launch` treats it
    as numba's (its message carries the CUDA_ERROR_* name the hints match)."""


def _drv():
    from cuda.bindings import driver

    return driver


def _check(result):
    """The values of a ``cuda.bindings.driver`` call, or :class:`CudaAPIError`."""
    err, *values = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        # the enum's name, CUDA_ERROR_...: asking the driver could fail after a fault
        raise CudaAPIError(f"[{int(err)}] Call to the CUDA driver results in "
                           f"{getattr(err, 'name', None) or err}")
    return values[0] if len(values) == 1 else tuple(values)


class DeviceArray:
    """A device allocation with numba's ``DeviceNDArray`` calls that a run makes."""

    def __init__(self, shape, dtype, ptr: int, base: DeviceArray | None = None):
        self.shape, self.dtype, self.ptr, self._base = tuple(shape), np.dtype(dtype), ptr, base
        self.size = int(np.prod(self.shape))
        self.nbytes = self.size * self.dtype.itemsize

    def copy_to_host(self, ary=None, stream=None):
        d = _drv()
        out = np.empty(self.shape, self.dtype) if ary is None else ary
        if stream is None:
            _check(d.cuMemcpyDtoH(out.ctypes.data, self.ptr, self.nbytes))
        else:
            _check(d.cuMemcpyDtoHAsync(out.ctypes.data, self.ptr, self.nbytes, stream.handle))
        return out

    def view(self, dtype) -> DeviceArray:
        dtype = np.dtype(dtype)
        last = self.shape[-1] * self.dtype.itemsize // dtype.itemsize
        return DeviceArray((*self.shape[:-1], last), dtype, self.ptr, base=self)

    def __del__(self):
        if self._base is None and self.ptr:
            try:
                _drv().cuMemFree(self.ptr)
            except Exception:  # noqa: BLE001 - at exit, or after a sticky fault
                pass


class Stream:
    def __init__(self):
        self.handle = _check(_drv().cuStreamCreate(0))

    def synchronize(self):
        _check(_drv().cuStreamSynchronize(self.handle))


class Event:
    def __init__(self):
        self.handle = _check(_drv().cuEventCreate(0))

    def record(self, stream: Stream):
        _check(_drv().cuEventRecord(self.handle, stream.handle))

    def synchronize(self):
        _check(_drv().cuEventSynchronize(self.handle))


class Device:
    """numba's ``Device``: ``name``, ``compute_capability`` and attributes by name."""

    def __init__(self, dev):
        d = _drv()
        self.handle = dev
        self.name = _check(d.cuDeviceGetName(256, dev)).split(b"\0")[0].decode()
        self.compute_capability = (self._attr("COMPUTE_CAPABILITY_MAJOR"),
                                   self._attr("COMPUTE_CAPABILITY_MINOR"))

    def _attr(self, name: str) -> int:
        d = _drv()
        code = getattr(d.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
        return int(_check(d.cuDeviceGetAttribute(code, self.handle)))

    def __getattr__(self, name: str) -> int:
        if name.isupper():
            return self._attr(name)
        raise AttributeError(name)


class Context:
    def __init__(self, handle):
        self.handle = handle

    def get_memory_info(self) -> tuple[int, int]:
        free, total = _check(_drv().cuMemGetInfo())
        return int(free), int(total)

    def push(self):
        _check(_drv().cuCtxPushCurrent(self.handle))

    def pop(self):
        _check(_drv().cuCtxPopCurrent())


class Kernel:
    """A loaded kernel, launched as numba's: ``kernel[blocks, threads, stream](*arrays)``."""

    def __init__(self, module, function, cooperative: bool, name: str):
        self.module, self.function, self.cooperative, self.name = module, function, cooperative, name

    def max_cooperative_grid_blocks(self, threads: int, device: Device) -> int:
        per_sm = _check(_drv().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            self.function, int(threads), 0))
        return int(per_sm) * device.MULTIPROCESSOR_COUNT

    def __getitem__(self, config):
        blocks, threads, *rest = config
        stream = rest[0] if rest else None

        def launch(*arrays):
            d = _drv()
            words = np.array(flatten(arrays), np.int64)
            ptrs = np.arange(words.size, dtype=np.uint64) * 8 + np.uint64(words.ctypes.data)
            go = d.cuLaunchCooperativeKernel if self.cooperative else d.cuLaunchKernel
            extra = () if self.cooperative else (0,)
            _check(go(self.function, int(blocks), 1, 1, int(threads), 1, 1, 0,
                      0 if stream is None else stream.handle, ptrs.ctypes.data, *extra))
            del words, ptrs  # the driver copied the parameters at the call

        return launch


def _free_host(ptr: int) -> None:
    try:
        _drv().cuMemFreeHost(ptr)
    except Exception:  # noqa: BLE001 - at exit, or after a sticky fault
        pass


class Driver:
    """The calls of numba's ``cuda`` module a cuMBE run makes, on the primary context of
    device 0 (numba's default device)."""

    def __init__(self):
        d = _drv()
        _check(d.cuInit(0))
        if _check(d.cuDeviceGetCount()) < 1:
            raise CudaAPIError("no CUDA device")
        self.device = Device(_check(d.cuDeviceGet(0)))
        ctx = _check(d.cuDevicePrimaryCtxRetain(self.device.handle))
        _check(d.cuCtxSetCurrent(ctx))
        self.context = Context(ctx)
        self._kernels: dict = {}

    # -- the run's kernel
    def kernel(self, build: dict) -> Kernel | None:
        """The cached kernel of ``build`` for this device, loaded (once per process); None
        when the cache holds none that matches (:func:`load`)."""
        name = json.dumps(build, sort_keys=True)
        if name not in self._kernels:
            self._kernels[name] = self._load(build)
        return self._kernels[name]

    def _load(self, build: dict) -> Kernel | None:
        found = load(build, self.device.compute_capability)
        if found is None:
            return None
        meta, cubin = found
        d = _drv()
        try:
            module = _check(d.cuModuleLoadData(cubin))
            function = _check(d.cuModuleGetFunction(module, meta["entry"].encode()))
        except CudaAPIError as e:  # numba's path then says what the device's state is
            note(f"cubin cache: the entry for {build} does not load ({e})")
            return None
        return Kernel(module, function, bool(meta["cooperative"]), meta["entry"])

    # -- numba.cuda's calls
    def is_available(self) -> bool:
        return True

    def get_current_device(self) -> Device:
        return self.device

    def current_context(self) -> Context:
        return self.context

    def synchronize(self):
        _check(_drv().cuCtxSynchronize())

    def device_array(self, shape, dtype) -> DeviceArray:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
        return DeviceArray(shape, dtype, int(_check(_drv().cuMemAlloc(nbytes))))

    def to_device(self, ary) -> DeviceArray:
        ary = np.ascontiguousarray(ary)
        out = self.device_array(ary.shape, ary.dtype)
        _check(_drv().cuMemcpyHtoD(out.ptr, ary.ctypes.data, ary.nbytes))
        return out

    def pinned_array(self, shape, dtype):
        import ctypes

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = max(int(np.prod(shape)) * np.dtype(dtype).itemsize, 1)
        ptr = int(_check(_drv().cuMemHostAlloc(nbytes, 0)))
        buf = (ctypes.c_byte * nbytes).from_address(ptr)
        out = np.frombuffer(buf, dtype=dtype, count=int(np.prod(shape))).reshape(shape)
        weakref.finalize(buf, _free_host, ptr)  # buf lives as long as any view of it
        return out

    def stream(self) -> Stream:
        return Stream()

    def event(self) -> Event:
        return Event()

    @staticmethod
    def event_elapsed_time(e0: Event, e1: Event) -> float:
        return float(_check(_drv().cuEventElapsedTime(e0.handle, e1.handle)))
