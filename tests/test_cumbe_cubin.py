"""A warm cuMBE run's start, without a GPU: the launch from a cached cubin (cumbe/cubin.py;
the kernel's parameter words against numba-cuda's own, the cache's key and its refusals,
the fallback to numba's path), a run's host modules importing no numba, and the
preparation's cache entry found by the CSR file's identity."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cumbe import buffers, cubin

REPO = Path(__file__).resolve().parents[1]
PLAN = buffers.Plan(n_u=7, n_v=9, n_edges=20, n_tasks=5, k=3, blocks=2, warps=4, arena_words=6)


def _fake_arrays(plan=PLAN):
    """Host stand-ins of the run's device arrays (shape, dtype, size, ptr), as allocate
    makes them: arena64 is a view of arena."""
    out, ptr = {}, 0x10000
    for b in buffers.SPEC:
        if b.role == "view":
            continue
        shape = b.shape(plan)
        out[b.name] = cubin.DeviceArray(shape, b.dtype, ptr)
        ptr += 0x10000
    out["arena64"] = out["arena"].view(np.uint64)
    for a in out.values():  # no device memory to free
        a._base = a
    return out


def test_parameter_words_are_numbas():
    """numba-cuda's _Kernel._prepare_args on device arrays of the same shapes, dtypes and
    pointers gives the same words: the kernel's ABI (172 .u64 parameters in its PTX)."""
    pytest.importorskip("numba.cuda.dispatcher")
    from mbebench import envvars
    if envvars.simulating():
        pytest.skip("the simulator has no kernel ABI")
    from numba import types
    from numba.cuda.cudadrv import devicearray
    from numba.cuda.dispatcher import _Kernel
    from numba.np.numpy_support import from_dtype

    class Mem:  # numba's MemoryPointer, as far as a device array reads it
        def __init__(self, ptr):
            self.ptr = self.device_pointer = ptr
            self.device_ctypes_pointer = ctypes.c_void_p(ptr)

    arrays = _fake_arrays()
    ours = cubin.flatten(buffers.args(arrays))
    theirs: list = []
    owner = SimpleNamespace(extensions=[])
    for name in buffers.NAMES:
        a = arrays[name]
        strides = tuple(np.empty(a.shape, a.dtype).strides)
        dev = devicearray.DeviceNDArray(a.shape, strides, a.dtype, gpu_data=Mem(a.ptr))
        ty = types.Array(from_dtype(a.dtype), len(a.shape), "C")
        _Kernel._prepare_args(owner, ty, dev, 0, [], theirs)
    assert [int(x) for x in theirs] == ours
    assert len(ours) == 172


def _fake_overload(cubin_bytes=b"\x7fELF fake cubin", linking=(), entry="_Z6kernel"):
    from cumbe import buffers as b

    plan = b.Plan(1, 1, 1, 1, 1, 1, 1, 2)
    args = [SimpleNamespace(dtype=np.dtype(x.dtype).name, ndim=len(x.shape(plan)), layout="C")
            for x in b.SPEC]
    lib = SimpleNamespace(_linking_files=set(linking), _setup_functions=[], _entry_name=entry,
                          get_cubin=lambda cc: cubin_bytes)
    return SimpleNamespace(_codelibrary=lib, signature=SimpleNamespace(args=args),
                           cooperative=True, debug=False)


BUILD = dict(rs=True, es=True, ws=True, instr=False, threads=128, pieces=False, compact=False)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(cubin.CACHE_ENV, str(tmp_path / "cubins"))
    for name in [k for k in os.environ if k.startswith("NUMBA_")]:
        monkeypatch.delenv(name)
    return tmp_path / "cubins"


def test_a_stored_cubin_is_loaded_for_its_build_only(cache, monkeypatch):
    path = cubin.store(BUILD, (9, 0), _fake_overload())
    assert path is not None and path.with_suffix(".cubin").is_file()
    meta, data = cubin.load(BUILD, (9, 0))
    assert data == b"\x7fELF fake cubin" and meta["entry"] == "_Z6kernel" and meta["cooperative"]
    assert meta["args"] == cubin.arg_layout()
    # another build, another device, another numba setting: no entry
    assert cubin.load({**BUILD, "compact": True}, (9, 0)) is None
    assert cubin.load({**BUILD, "threads": 256}, (9, 0)) is None
    assert cubin.load(BUILD, (8, 0)) is None
    toolkit = os.environ.get("CUDA_HOME")
    monkeypatch.setenv("CUDA_HOME", "/another/toolkit")
    assert cubin.load(BUILD, (9, 0)) is None
    if toolkit is None:
        monkeypatch.delenv("CUDA_HOME")
    else:
        monkeypatch.setenv("CUDA_HOME", toolkit)
    assert cubin.load(BUILD, (9, 0)) is not None
    monkeypatch.setenv("NUMBA_OPT", "1")
    assert cubin.load(BUILD, (9, 0)) is None


def test_a_damaged_or_foreign_entry_is_ignored_and_rewritten(cache):
    path = cubin.store(BUILD, (9, 0), _fake_overload())
    path.with_suffix(".cubin").write_bytes(b"\x7fELF other bytes")
    assert cubin.load(BUILD, (9, 0)) is None  # the cubin is not the one recorded
    cubin.store(BUILD, (9, 0), _fake_overload())
    assert cubin.load(BUILD, (9, 0)) is not None
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["key"]["sources"] = "0" * 64  # written for other sources
    path.with_suffix(".json").write_text(json.dumps(meta))
    assert cubin.load(BUILD, (9, 0)) is None
    path.with_suffix(".json").write_text("{truncated")
    assert cubin.load(BUILD, (9, 0)) is None
    cubin.store(BUILD, (9, 0), _fake_overload())
    assert cubin.load(BUILD, (9, 0)) is not None
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_a_kernel_that_needs_more_than_its_cubin_is_not_stored(cache):
    assert cubin.store(BUILD, (9, 0), _fake_overload(linking=["nrt.cu"])) is None
    assert not cache.exists() or not list(cache.iterdir())


def test_the_key_follows_every_kernel_source():
    key = cubin.build_key(BUILD, (9, 0))
    from mbebench.jitcache import imported_modules

    mods = imported_modules("cumbe.kernel", "cumbe.buffers")
    assert {"cumbe.kernel.search", "cumbe.consts", "cumbe.layout", "mbebench.fingerprint",
            "cumbe.buffers"} <= set(mods)
    assert len(key["sources"]) == 64 and key["cc"] == [9, 0]


@pytest.mark.parametrize("env", [{"MBEBENCH_FAST_LAUNCH": "0"}, {"CUMBE_LINEINFO": "1"},
                                 {"CUMBE_MIN_BLOCKS": "2"}, {"NUMBA_ENABLE_CUDASIM": "1"}])
def test_numbas_path_where_the_cache_cannot_be_trusted(monkeypatch, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert not cubin.enabled()
    assert cubin.driver_for_run() is None


def test_numbas_path_without_a_driver_or_once_numba_started(monkeypatch, capsys):
    monkeypatch.setenv(cubin.VERBOSE_ENV, "1")
    for k in ("MBEBENCH_FAST_LAUNCH", "NUMBA_ENABLE_CUDASIM"):
        monkeypatch.delenv(k, raising=False)

    def no_driver():
        raise RuntimeError("no libcuda")

    monkeypatch.setattr(cubin, "Driver", no_driver)
    monkeypatch.setattr(cubin, "_DRIVER", None)
    monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)
    assert cubin.driver_for_run() is None
    assert "no libcuda" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "numba.cuda", SimpleNamespace())
    assert cubin.driver_for_run() is None
    assert "numba.cuda is imported" in capsys.readouterr().err


def test_a_runs_host_modules_import_no_numba(tmp_path):
    """What a warm ``python -m cumbe run`` imports before its kernel: the CLI, the engine,
    the preparation read back from its cache, the grid and buffers, the driver launch."""
    probe = f"""
import sys
import numpy as np
import cumbe.__main__, cumbe.engine, cumbe.single_device, cumbe.cubin, cumbe.grid
import cumbe.buffers, cumbe.layout, cumbe.launch, cumbe.progress, cumbe.prepare
from mbebench.csr import from_edges, read_csr, write_csr
from mbebench.shard import parse
from mbebench.fingerprint_sum import to_hex
assert not [m for m in sys.modules if m.split('.')[0] == 'numba'], 'imported numba'
parse('0/1')
g = from_edges(np.array([0, 0, 1, 2]), np.array([0, 1, 1, 2]), 3, 3)
write_csr(g, {str(tmp_path / 'g.csr')!r})
sys.modules['numba'] = None  # a numba import from here on fails
"""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    # the first process fills the preparation's cache (with numba)
    fill = "from mbebench.csr import read_csr; from cumbe.prepare import prepare_cached; " \
           f"prepare_cached(read_csr({str(tmp_path / 'g.csr')!r}))"
    subprocess.run([sys.executable, "-c", probe.replace("sys.modules['numba'] = None", "")],
                   env=env, check=True, cwd=REPO)
    subprocess.run([sys.executable, "-c", fill], env=env, check=True, cwd=REPO)
    read = f"""
from cumbe.prepare import prepare_cached, shard_of
from cumbe import buffers, grid
prep, _ = shard_of(prepare_cached(read_csr({str(tmp_path / 'g.csr')!r})), '0/1')
assert prep.needs is not None and prep.tasks.size
print(buffers.nbytes(buffers.Plan(prep.n_u, prep.n_v, int(prep.adjU.size), 1, 3, 1, 4, 64)))
"""
    p = subprocess.run([sys.executable, "-c", probe + read], env=env, cwd=REPO,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-3000:]


FAKE_DRIVER_RUN = r"""
import json, sys
from types import SimpleNamespace
import numpy as np
from cumbe import cubin, consts, single_device
from cumbe import kernel as K  # the simulator's build of the kernel
from cumbe.spec import run_options
from mbebench.csr import from_edges
from mbebench.oracle import count_and_fingerprint

class HostArray(cubin.DeviceArray):
    def __init__(self, host):
        self.host = host
        super().__init__(host.shape, host.dtype, host.ctypes.data, base=self)
    def copy_to_host(self, ary=None, stream=None):
        if ary is None:
            return self.host.copy()
        ary[...] = self.host
        return ary
    def view(self, dtype):
        return HostArray(self.host.view(dtype))

class Nothing:
    def record(self, stream): pass
    def synchronize(self): pass
    def push(self): pass
    def pop(self): pass
    def get_memory_info(self): return 2**40, 2**40

class FakeKernel:
    def __init__(self, build):
        self.build = build
    def max_cooperative_grid_blocks(self, threads, device):
        return 1
    def __getitem__(self, config):
        blocks, threads, stream = config
        def launch(*arrays):
            assert len(cubin.flatten(arrays)) == 172
            K.SIM_WARPS.reset()
            K.build(**self.build)[blocks, threads](*[a.host for a in arrays])
            LAUNCHED.append(self.build)
        return launch

class FakeDriver(cubin.Driver):
    def __init__(self):
        self.device = SimpleNamespace(name="simulator", compute_capability=(9, 0),
                                      MULTIPROCESSOR_COUNT=1, CLOCK_RATE=1e6)
        self.context = Nothing()
    def kernel(self, build):
        return FakeKernel(build)
    def synchronize(self): pass
    def device_array(self, shape, dtype): return HostArray(np.zeros(shape, dtype))
    def to_device(self, ary): return HostArray(np.array(ary))
    def pinned_array(self, shape, dtype): return np.zeros(shape, dtype)
    def stream(self): return Nothing()
    def event(self): return Nothing()
    @staticmethod
    def event_elapsed_time(e0, e1): return 1.0

LAUNCHED = []
rng = np.random.default_rng(5)
m = rng.random((7, 8)) < 0.45
g = from_edges(*np.nonzero(m), 7, 8)
out = {"oracle": list(count_and_fingerprint(g))}
for variant in ("cuMBE", "noWS"):
    opts = run_options(variant=variant, k=3, threads=64)
    sim = single_device.run(g, opts)
    single_device.sim_enabled = lambda: False
    cubin.driver_for_run = FakeDriver
    fake = single_device.run(g, opts)
    single_device.sim_enabled = lambda: True
    out[variant] = [[r.count, r.fingerprint, r.stats] for r in (sim, fake)]
out["launched"] = LAUNCHED
print(json.dumps(out, default=str))
"""


@pytest.mark.cudasim
def test_a_run_through_the_driver_path_counts_as_numbas(tmp_path):
    """single_device's cubin branch end to end, with a stand-in driver whose kernel is the
    simulator's: the same count, fingerprint and statistics as the numba path (times, the
    launch path and the device's grid limit aside; with work stealing, the nodes and tasks
    run differ from run to run in the simulator, whose threads interleave as they come)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NUMBA_ENABLE_CUDASIM": "1",
           "MBEBENCH_PROGRESS_S": "0"}
    p = subprocess.run([sys.executable, "-c", FAKE_DRIVER_RUN], env=env, cwd=REPO,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(out["launched"]) == 2
    apart = {"kernel_s", "compile_s", "setup_s", "prepare_s", "host_s", "launch",
             "max_cooperative_blocks",
             "blocks_clamped", "progress_lines"}
    for variant in ("cuMBE", "noWS"):
        (c0, f0, s0), (c1, f1, s1) = out[variant]
        # the simulator's threads interleave differently from run to run, so the work
        # statistics (even noWS's node count) may differ; the count and fingerprint not
        skip = apart | {"nodes", "tasks_run", "block_tasks_run", "progress_end"}
        assert [c0, f0] == [c1, f1] == out["oracle"], variant
        assert s1["launch"] == "cubin" and s0["launch"] == "numba"
        assert {k: v for k, v in s0.items() if k not in skip} == \
            {k: v for k, v in s1.items() if k not in skip}, variant


def test_the_preparation_is_found_by_its_files_identity_without_hashing(tmp_path, monkeypatch):
    from cumbe import prepare as preparation
    from mbebench.csr import CSRGraph, from_edges, read_csr, write_csr

    monkeypatch.delenv(preparation.CACHE_ENV, raising=False)
    path = tmp_path / "g.csr"
    rng = np.random.default_rng(3)
    write_csr(from_edges(*np.nonzero(rng.random((12, 15)) < 0.3), 12, 15), path)
    first = preparation.prepare_cached(read_csr(path))
    hashed = []
    real_key = preparation.cache_key
    monkeypatch.setattr(preparation, "cache_key", lambda *a: hashed.append(1) or real_key(*a))
    again = preparation.prepare_cached(read_csr(path))
    assert not hashed and np.array_equal(again.needs, first.needs)
    # the file touched: found by its content, and then by its new identity
    os.utime(path, ns=(1, 1))
    preparation.prepare_cached(read_csr(path))
    preparation.prepare_cached(read_csr(path))
    assert len(hashed) == 1
    # a graph in memory that names the file: never by the file's identity
    g = read_csr(path)
    copy = CSRGraph(g.n_left, g.n_right, g.n_edges, *(np.array(a) for a in (
        g.left_offsets, g.left_indices, g.right_offsets, g.right_indices)), path=str(path))
    assert preparation.file_key(copy, True, True) is None
    preparation.prepare_cached(copy)
    assert len(hashed) == 2
    # another graph written under the same name: a new identity, a new preparation
    write_csr(from_edges(*np.nonzero(rng.random((12, 15)) < 0.5), 12, 15), path)
    other = preparation.prepare_cached(read_csr(path))
    assert np.array_equal(other.needs, preparation.prepare_cached(read_csr(path)).needs)
    assert len(hashed) == 3 and not np.array_equal(other.offU, first.offU)


def test_an_entry_stored_already_is_not_written_again(cache):
    path = cubin.store(BUILD, (9, 0), _fake_overload())
    before = path.with_suffix(".json").stat().st_mtime_ns, path.with_suffix(".cubin").stat().st_ino
    os.utime(path.with_suffix(".json"), ns=(1, 1))
    assert cubin.store(BUILD, (9, 0), _fake_overload()) == path
    assert path.with_suffix(".json").stat().st_mtime_ns == 1
    assert path.with_suffix(".cubin").stat().st_ino == before[1]
    cubin.store(BUILD, (9, 0), _fake_overload(cubin_bytes=b"\x7fELF recompiled"))
    assert cubin.load(BUILD, (9, 0))[1] == b"\x7fELF recompiled"


class _Bindings:
    """cuda.bindings.driver with the driver library missing: each call converts its
    arguments as on a GPU (a wrong type is the bindings' TypeError), then, where the library
    would be called, answers success with a stand-in value."""

    def __init__(self):
        from cuda.bindings import driver

        self.d, self.calls, self.next_ptr, self.n_params = driver, [], 0x7000_0000, 0
        self.host = np.zeros(1 << 12, np.uint8)  # what cuMemHostAlloc hands out

    def __getattr__(self, name):
        d = self.d
        real = getattr(d, name)
        if not callable(real) or not name.startswith("cu"):
            return real

        def call(*args):
            try:
                real(*args)
                raise AssertionError(f"{name} reached a driver")
            except TypeError:
                raise
            except Exception as e:  # noqa: BLE001 - the missing library: arguments were fine
                if "NVIDIA" not in str(e) and "driver" not in str(e):
                    raise
            self.calls.append((name, args))
            if name.startswith("cuLaunch"):  # the parameter words, while they are alive
                ptrs = (ctypes.c_uint64 * self.n_params).from_address(args[9])
                self.params = [ctypes.c_int64.from_address(p).value for p in ptrs]
            ok = d.CUresult.CUDA_SUCCESS
            if name == "cuMemAlloc":
                self.next_ptr += 0x1000
                return ok, d.CUdeviceptr(self.next_ptr)
            values = {
                "cuDeviceGetCount": 1, "cuDeviceGet": d.CUdevice(0),
                "cuDeviceGetName": b"Stand-in GPU\0\0\0", "cuDeviceGetAttribute": 9,
                "cuDevicePrimaryCtxRetain": d.CUcontext(), "cuModuleLoadData": d.CUmodule(),
                "cuModuleGetFunction": d.CUfunction(),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor": 2, "cuStreamCreate": d.CUstream(),
                "cuEventCreate": d.CUevent(), "cuEventElapsedTime": 1.5,
                "cuMemHostAlloc": self.host.ctypes.data, "cuCtxPopCurrent": d.CUcontext(),
                "cuGetErrorName": b"CUDA_ERROR_STAND_IN"}
            if name == "cuMemGetInfo":
                return ok, 2**34, 2**35
            return (ok, values[name]) if name in values else (ok,)

        return call


def test_the_driver_starts_in_a_thread_and_the_run_takes_it(monkeypatch):
    """`python -m cumbe run` starts the driver and the primary context before it imports
    numpy and reads the graph (cumbe.driver_start): the run waits for that thread, then
    makes its own driver on the started context, current in the run's thread."""
    import threading

    from cumbe import driver_start

    pytest.importorskip("cuda.bindings.driver")
    b = _Bindings()
    threads = []
    monkeypatch.setattr(cubin, "_drv", lambda: b)
    monkeypatch.setattr(driver_start, "_drv",
                        lambda: threads.append(threading.current_thread().name) or b)
    monkeypatch.setattr(cubin, "_DRIVER", None)
    monkeypatch.setattr(driver_start, "_thread", None)
    for k in ("MBEBENCH_FAST_LAUNCH", "NUMBA_ENABLE_CUDASIM"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.delitem(sys.modules, "numba.cuda", raising=False)
    driver_start.start()
    assert driver_start.pending()
    drv = cubin.driver_for_run()
    assert isinstance(drv, cubin.Driver) and not driver_start.pending()
    calls = [c for c, _ in b.calls]
    first = calls.index("cuDevicePrimaryCtxRetain")
    assert calls[:first + 1] == ["cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain"]
    assert threads == [driver_start.NAME]
    assert calls[-1] == "cuCtxSetCurrent"  # the run's driver, current in its thread
    assert cubin.driver_for_run() is drv
    # no device: the thread is not pending, and the run's own start says why not
    monkeypatch.setattr(cubin, "_DRIVER", None)
    monkeypatch.setattr(driver_start, "_drv", lambda: (_ for _ in ()).throw(OSError("no libcuda")))
    monkeypatch.setattr(cubin, "Driver", lambda: (_ for _ in ()).throw(RuntimeError("no libcuda")))
    driver_start.start()
    driver_start._thread.join()
    assert not driver_start.pending()
    assert cubin.driver_for_run() is None


def test_the_command_line_starts_the_driver_only_for_a_gpu_run(monkeypatch):
    """The guess made before the full parser (and numpy) is imported: a run on one GPU
    starts the driver early; the simulator, several devices and other commands do not."""
    from cumbe.__main__ import _needs_driver

    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)

    assert _needs_driver(["run", "g.csr"]) and _needs_driver(["run", "g.csr", "--k", "3"])
    assert not _needs_driver(["run", "g.csr", "--simulate"])
    assert not _needs_driver(["run", "g.csr", "--devices", "2"])
    assert not _needs_driver(["run", "g.csr", "--devices=all"])
    assert not _needs_driver(["--version"]) and not _needs_driver([])
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert not _needs_driver(["run", "g.csr"])


def test_the_driver_calls_pass_the_bindings_types(cache, monkeypatch):
    """Every call of cumbe.cubin.Driver through the real cuda.bindings.driver up to the
    driver library (missing here): the arguments' types are what the bindings take, and the
    launch's parameter array holds the flattened words."""
    pytest.importorskip("cuda.bindings.driver")
    b = _Bindings()
    monkeypatch.setattr(cubin, "_drv", lambda: b)
    drv = cubin.Driver()
    assert drv.device.name == "Stand-in GPU" and drv.device.compute_capability == (9, 9)
    cubin.store(BUILD, (9, 9), _fake_overload())
    kern = drv.kernel(BUILD)
    assert kern is not None and kern.max_cooperative_grid_blocks(128, drv.device) == 18
    assert drv.kernel(dict(BUILD)) is kern  # a repeat in this process: loaded once
    assert sum(name == "cuModuleLoadData" for name, _ in b.calls) == 1
    host = np.arange(6, dtype=np.int64).reshape(2, 3)
    dev = drv.to_device(host)
    scratch = drv.device_array((4,), np.int32)
    view = scratch.view(np.uint64)
    assert view.shape == (2,) and view.ptr == scratch.ptr
    stream, e0, e1 = drv.stream(), drv.event(), drv.event()
    pinned = drv.pinned_array((2, 3), np.int64)
    dev.copy_to_host(pinned, stream=stream)
    dev.copy_to_host()
    e0.record(stream)
    b.n_params = len(cubin.flatten((dev, scratch, view)))
    kern[3, 128, stream](dev, scratch, view)
    e1.record(stream)
    e1.synchronize()
    stream.synchronize()
    drv.synchronize()
    assert drv.event_elapsed_time(e0, e1) == 1.5
    assert drv.current_context().get_memory_info() == (2**34, 2**35)
    drv.current_context().push()
    drv.current_context().pop()
    (launch,) = [args for name, args in b.calls if name == "cuLaunchCooperativeKernel"]
    assert launch[1:8] == (3, 1, 1, 128, 1, 1, 0)
    assert b.params == cubin.flatten((dev, scratch, view))
    assert b.params[:5] == [0, 0, 6, 8, dev.ptr] and b.params[5:9] == [2, 3, 24, 8]
    del dev, scratch, view  # frees through cuMemFree (an int pointer)
    assert sum(name == "cuMemFree" for name, _ in b.calls) == 2
    del pinned
    assert sum(name == "cuMemFreeHost" for name, _ in b.calls) == 1


def test_a_failed_driver_call_is_one_line_naming_the_cuda_error():
    d = pytest.importorskip("cuda.bindings.driver")
    from cumbe import launch

    with pytest.raises(cubin.CudaAPIError) as e:
        cubin._check((d.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS,))
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in str(e.value) and launch._is_cuda_error(e.value)
    assert any(name in launch.one_line(e.value) for name in launch.STICKY)
    assert cubin._check((d.CUresult.CUDA_SUCCESS, 7)) == 7
    assert cubin._check((d.CUresult.CUDA_SUCCESS, 1, 2)) == (1, 2)


def test_cubin_bytes_reads_bytes_and_a_cuda_core_object_code():
    from types import SimpleNamespace

    assert cubin.cubin_bytes(b"\x7fELF") == b"\x7fELF"
    assert cubin.cubin_bytes(bytearray(b"ab")) == b"ab"
    # numba-cuda's linker returns cuda.core's ObjectCode on some installs
    assert cubin.cubin_bytes(SimpleNamespace(code=b"\x7fELF", code_type="cubin")) == b"\x7fELF"
    assert cubin.cubin_bytes(SimpleNamespace(code="/tmp/k.cubin", code_type="cubin")) is None
    assert cubin.cubin_bytes(SimpleNamespace(code=b"ptx", code_type="ptx")) is None
    assert cubin.cubin_bytes(object()) is None


@pytest.mark.parametrize("starting", [True, False])
def test_the_preparation_runs_while_the_driver_starts(monkeypatch, starting):
    """With the driver starting in its thread the run prepares the graph meanwhile; without
    one it asks for the device first, so a machine without one is told so before any work."""
    from cumbe import driver_start, single_device
    from mbebench.csr import from_edges

    order = []

    class Stop(Exception):
        pass

    def prepare(state, prepared):
        order.append("prepare")
        raise Stop

    monkeypatch.setattr(single_device, "sim_enabled", lambda: False)
    monkeypatch.setattr(single_device, "_prepare", prepare)
    monkeypatch.setattr(driver_start, "pending", lambda: starting)
    monkeypatch.setattr(cubin, "driver_for_run", lambda: order.append("driver") or object())
    with pytest.raises(Stop):
        single_device.run(from_edges([0], [0], 1, 1))
    assert order == (["prepare"] if starting else ["driver", "prepare"])
