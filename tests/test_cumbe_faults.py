"""GPU faults without a GPU: cuMBE's memory check and checked launch (cumbe.launch).

Unit tests hand cumbe.launch fake kernels and a fake ``cuda`` module that raise the
exceptions numba-cuda 0.30 and cuda.core really raise (built the way they build
them); the end-to-end tests run the real engine in numba's CUDA simulator, inside
the runner's child process, with one fault injected (tests/cuda_fault_engines.py).
On a GPU the same faults are made for real by benchmarks/gpu/faults.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cumbe import launch as cumbe_launch
from mbebench import csr, oracle, runner
from mbebench.fingerprint import to_hex

HERE = Path(__file__).resolve().parent
WHAT = "results/csr/Marvel.csr"


def api_error(name, call):
    # numba.cuda.cudadrv.driver.Driver._check_cuda_python_error
    from numba.cuda.cudadrv.driver import CudaAPIError, binding

    code = getattr(binding.CUresult, name)
    return CudaAPIError(code, f"Call to {call} results in {code.name}")


# ---------------------------------------------------------------- memory check


def test_memory_check_names_dataset_and_bytes():
    with pytest.raises(cumbe_launch.DeviceMemoryError) as ei:
        cumbe_launch.check_memory(3 * 2**30, 2**20, 80 * 2**30, WHAT,
                                  "264 blocks (6486+12942 vertices)")
    msg = str(ei.value)
    assert isinstance(ei.value, MemoryError)
    assert msg.startswith(WHAT + ": ") and "\n" not in msg
    assert f"needs {3 * 2**30} bytes (3.00 GiB)" in msg
    assert f"only {2**20} free of {80 * 2**30}" in msg and "264 blocks" in msg


def test_memory_check_passes_when_it_fits():
    cumbe_launch.check_memory(100, 100, 1000, WHAT)  # exactly what is free: fits
    cumbe_launch.check_memory(100, float("inf"), float("inf"), WHAT)  # the simulator's answer
    with pytest.raises(cumbe_launch.DeviceMemoryError):  # one byte more does not
        cumbe_launch.check_memory(101, 100, 1000, WHAT)


def test_free_memory_is_read_after_numba_frees_dead_arrays():
    events = []

    class Pending:
        def __init__(self, owner):
            self.owner = owner

        def clear(self):
            events.append(f"clear {self.owner}")

    class Manager:
        deallocations = Pending("arrays")

    class Ctx:
        memory_manager = Manager()
        deallocations = Pending("context")

        def get_memory_info(self):
            events.append("info")
            return (5, 9)

    class Cuda:
        current_context = staticmethod(Ctx)

    assert cumbe_launch.device_memory(Cuda) == (5, 9)
    assert events == ["clear arrays", "clear context", "info"]


def test_graph_label_is_the_csr_path_or_the_sizes():
    g = csr.from_edges([0, 1], [1, 0])
    assert cumbe_launch.graph_label(g) == "graph (2+2 vertices, 2 edges)"
    assert cumbe_launch.graph_label(csr.CSRGraph(**{**g.__dict__, "path": WHAT})) == WHAT


# ---------------------------------------------------------------- grid size


def test_grid_blocks_clamps_and_refuses_an_empty_grid(monkeypatch):
    monkeypatch.delenv(cumbe_launch.UNCLAMPED_ENV, raising=False)
    assert cumbe_launch.grid_blocks(0, 264, 512, "H100") == 264
    assert cumbe_launch.grid_blocks(7, 264, 512, "H100") == 7
    assert cumbe_launch.grid_blocks(1000, 264, 512, "H100") == 264
    with pytest.raises(cumbe_launch.LaunchError, match="cannot run 1024 threads per block on H100"):
        cumbe_launch.grid_blocks(0, 0, 1024, "H100")
    monkeypatch.setenv(cumbe_launch.UNCLAMPED_ENV, "1")  # the device fault test's hook
    assert cumbe_launch.grid_blocks(1000, 264, 512, "H100") == 1000
    assert cumbe_launch.grid_blocks(0, 264, 512, "H100") == 264


# ---------------------------------------------------------------- checked launch


class FakeCuda:
    """The part of numba.cuda checked_launch uses; ``fail`` maps a step to an exception."""

    def __init__(self, fail=None):
        self.fail = dict(fail or {})
        self.log = []

    def _step(self, name):
        self.log.append(name)
        if name in self.fail:
            raise self.fail.pop(name)

    def synchronize(self):
        self._step("sync-after" if "launch" in self.log else "sync-before")

    def stream(self):
        return "stream"

    def event(self):
        cuda = self

        class Event:
            def record(self, stream=0):
                cuda.log.append("record")

            def synchronize(self):
                cuda._step("event-sync")

        return Event()

    def event_elapsed_time(self, e0, e1):
        return 250.0  # ms


class FakeKernel:
    def __init__(self, cuda, exc=None, seconds=0.0):
        self.cuda, self.exc, self.calls, self.seconds = cuda, exc, [], seconds

    def __getitem__(self, grid):
        def launch(*args):
            self.calls.append((grid, args))
            self.cuda.log.append("launch")
            time.sleep(self.seconds)
            if self.exc is not None:
                raise self.exc

        return launch


def _launch(cuda, kernel, events=True):
    return cumbe_launch.checked_launch(kernel, 300, 512, (1, 2), cuda=cuda, what=WHAT,
                            device="NVIDIA H100 80GB HBM3", events=events)


def test_checked_launch_runs_and_times_the_kernel():
    cuda = FakeCuda()
    kern = FakeKernel(cuda)
    assert _launch(cuda, kern) == pytest.approx(0.25)
    assert kern.calls == [((300, 512, "stream"), (1, 2))]  # a stream of its own
    assert cuda.log == ["sync-before", "record", "launch", "record", "event-sync", "sync-after"]


def test_checked_launch_host_timer_in_the_simulator():
    cuda = FakeCuda()
    # the host timer spans the launch: at least the fake kernel's 0.05 s
    assert _launch(cuda, FakeKernel(cuda, seconds=0.05), events=False) >= 0.05
    assert cuda.log == ["sync-before", "launch", "sync-after"]


def _cuda_core_error(text):
    from cuda.core._utils.cuda_utils import CUDAError  # what cuda.core's launch raises

    return CUDAError(text)


@pytest.mark.parametrize(
    "make_exc, driver_text",
    [
        (lambda: api_error("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "cuLaunchCooperativeKernel"),
         "Call to cuLaunchCooperativeKernel results in CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"),
        # numba-cuda 0.30 launches through cuda.core, which checks a cooperative grid itself
        (lambda: ValueError("The specified grid size (300 * 1 * 1) exceeds the limit (264)"),
         "ValueError: The specified grid size (300 * 1 * 1) exceeds the limit (264)"),
        (lambda: _cuda_core_error("CUDA_ERROR_INVALID_VALUE: This indicates that one or more of"
                                  " the parameters\npassed to the API call is not within range"),
         "CUDAError: CUDA_ERROR_INVALID_VALUE: This indicates that one or more of the parameters"
         " passed"),
        (lambda: api_error("CUDA_ERROR_OUT_OF_MEMORY", "cuLaunchKernel"),
         "CUDA_ERROR_OUT_OF_MEMORY"),
    ],
    ids=["driver-cooperative-too-large", "cuda-core-grid-check", "cuda-core-invalid", "oom"],
)
def test_a_launch_that_fails_is_one_clear_error(make_exc, driver_text):
    cuda = FakeCuda()
    exc = make_exc()
    with pytest.raises(cumbe_launch.LaunchError) as ei:
        _launch(cuda, FakeKernel(cuda, exc))
    msg = str(ei.value)
    assert msg.startswith(f"{WHAT}: cuMBE kernel launch failed on NVIDIA H100 80GB HBM3"
                          " (grid 300 x 512 threads): ")
    assert driver_text in msg and "\n" not in msg
    assert ei.value.__cause__ is exc
    assert "sync-after" not in cuda.log  # nothing waited on a kernel that never started


def test_a_kernel_that_faults_is_reported_at_the_synchronize():
    cuda = FakeCuda({"sync-after": api_error("CUDA_ERROR_ILLEGAL_ADDRESS", "cuCtxSynchronize")})
    with pytest.raises(cumbe_launch.LaunchError) as ei:
        _launch(cuda, FakeKernel(cuda))
    msg = str(ei.value)
    assert "cuMBE kernel failed while running on NVIDIA H100 80GB HBM3 (grid 300 x 512" in msg
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in msg and "until the process exits" in msg
    assert msg.endswith("; try: " + cumbe_launch.hint("CUDA_ERROR_ILLEGAL_ADDRESS"))
    assert "\n" not in msg


def test_a_fault_names_the_run_and_what_to_try():
    cuda = FakeCuda({"sync-after": api_error("CUDA_ERROR_ILLEGAL_ADDRESS", "cuCtxSynchronize")})
    ctx = ("variant noWS, 287 blocks x 4 warps, 2496 arena words a warp, 6629 block-wide tasks, "
           "memory cap 0.25 GiB")
    with pytest.raises(cumbe_launch.LaunchError) as ei:
        cumbe_launch.checked_launch(FakeKernel(cuda), 287, 128, (), cuda=cuda, what=WHAT,
                                    device="H100", context=ctx)
    msg = str(ei.value)
    assert msg.startswith(f"{WHAT}: cuMBE kernel failed while running on H100 (grid 287 x 128")
    assert f"; run: {ctx}; try: a kernel fault is a cuMBE bug" in msg and "\n" not in msg


@pytest.mark.parametrize("reason, word", [
    ("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "--blocks"),
    ("ValueError: The specified grid size (300 * 1 * 1) exceeds the limit (264)", "--blocks"),
    ("CUDA_ERROR_OUT_OF_MEMORY", "--device-memory-gib"),
    ("CUDA_ERROR_LAUNCH_FAILED", "cuMBE bug"),
    ("something new", "rerun once"),
])
def test_every_launch_failure_says_what_to_try(reason, word):
    assert word in cumbe_launch.hint(reason)


def test_a_failed_event_wait_is_an_error():
    cuda = FakeCuda({"event-sync": api_error("CUDA_ERROR_LAUNCH_FAILED", "cuEventSynchronize")})
    failed = "failed while running.*CUDA_ERROR_LAUNCH_FAILED"
    with pytest.raises(cumbe_launch.LaunchError, match=failed):
        _launch(cuda, FakeKernel(cuda))


def test_a_failed_synchronize_in_the_simulator_path_is_an_error():
    cuda = FakeCuda({"sync-after": api_error("CUDA_ERROR_ILLEGAL_ADDRESS", "cuCtxSynchronize")})
    with pytest.raises(cumbe_launch.LaunchError, match="failed while running"):
        _launch(cuda, FakeKernel(cuda), events=False)


def test_an_earlier_async_error_stops_the_launch():
    cuda = FakeCuda({"sync-before": api_error("CUDA_ERROR_ILLEGAL_ADDRESS", "cuCtxSynchronize")})
    kern = FakeKernel(cuda)
    with pytest.raises(cumbe_launch.LaunchError, match="failed before launch"):
        _launch(cuda, kern)
    assert kern.calls == []


def test_multi_line_driver_messages_become_one_line():
    from numba.cuda.cudadrv.error import CudaSupportError

    exc = CudaSupportError("Error at driver init: \nCUDA driver library cannot be found:")
    assert cumbe_launch.one_line(exc) == (
        "CudaSupportError: Error at driver init: CUDA driver library cannot be found:"
    )


def test_a_kernel_that_left_no_trace_gives_no_count():
    with pytest.raises(cumbe_launch.LaunchError, match="did not run"):
        cumbe_launch.check_ran(0, 17, WHAT)
    cumbe_launch.check_ran(1, 17, WHAT)
    cumbe_launch.check_ran(0, 0, WHAT)  # an empty graph has no task to visit


# ---------------------------------------------------------------- errors escaping the engine


def _engine(exc):
    @cumbe_launch.named_device_errors
    def run(graph, **_):
        cumbe_launch.check_memory(1000, 4000, 8000, cumbe_launch.graph_label(graph))
        raise exc

    return run


def _graph():
    return csr.CSRGraph(**{**csr.from_edges([0], [0]).__dict__, "path": WHAT})


def test_out_of_memory_while_allocating_is_the_memory_error():
    exc = api_error("CUDA_ERROR_OUT_OF_MEMORY", "cuMemAlloc")
    with pytest.raises(cumbe_launch.DeviceMemoryError) as ei:
        _engine(exc)(_graph())
    msg = str(ei.value)
    assert msg.startswith(f"{WHAT}: out of device memory (estimated need 1000 bytes, 4000 free")
    assert "cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY" in msg and "\n" not in msg
    assert ei.value.__cause__ is exc


def test_other_cuda_errors_name_the_dataset():
    exc = api_error("CUDA_ERROR_NO_BINARY_FOR_GPU", "cuModuleLoadDataEx")
    no_binary = f"^{WHAT}: CUDA error: CudaAPIError: .*NO_BINARY"
    with pytest.raises(cumbe_launch.DeviceError, match=no_binary):
        _engine(exc)(_graph())


@pytest.mark.parametrize("exc", [ValueError("bad k"), cumbe_launch.LaunchError("x: already clear")])
def test_other_errors_pass_through_unchanged(exc):
    with pytest.raises(type(exc)) as ei:
        _engine(exc)(_graph())
    assert ei.value is exc


def test_engine_skipped_passes_through():
    from mbebench.engine import EngineSkipped

    with pytest.raises(EngineSkipped):
        _engine(EngineSkipped("no CUDA device"))(_graph())


# ---------------------------------------------------------------- end to end: runner rows


ENV = {
    "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    "NUMBA_ENABLE_CUDASIM": "1",
}


@pytest.fixture(scope="module")
def graph_file(tmp_path_factory):
    g = csr.from_edges([0, 0, 1, 1, 2, 3, 3, 4], [0, 1, 1, 2, 2, 0, 3, 3])
    path = tmp_path_factory.mktemp("g") / "Marvel.csr"
    csr.write_csr(g, path)
    return g, path


def _row(path, engine):
    return runner.run(dataset="Marvel", run_id="cumbe-cuMBE", engine=engine, graph=path,
                      params={"variant": "cuMBE", "k": 2}, timeout_s=300, env=ENV)


@pytest.mark.cudasim
def test_the_fault_harness_runs_the_real_engine(graph_file):
    g, path = graph_file
    row = _row(path, "cuda_fault_engines:plain")
    count, fp = oracle.count_and_fingerprint(g)
    assert row["status"] == "ok", row["message"]
    assert row["count"] == count and row["fingerprint"] == to_hex(fp)


@pytest.mark.cudasim
@pytest.mark.parametrize(
    "engine, text",
    [
        ("tiny_memory", "DeviceMemoryError: {path}: cuMBE needs "),
        ("alloc_oom", "DeviceMemoryError: {path}: out of device memory (estimated need "),
        ("launch_fails", "LaunchError: {path}: cuMBE kernel launch failed on simulator"
                         " (grid 1 x 32 threads): ValueError: The specified grid size"),
        ("sync_fails", "LaunchError: {path}: cuMBE kernel failed while running on simulator"
                       " (grid 1 x 32 threads): CudaAPIError: Call to cuCtxSynchronize"),
        ("never_runs", "LaunchError: {path}: cuMBE kernel left no trace"),
    ],
)
def test_gpu_faults_become_error_rows_without_counts(graph_file, engine, text):
    _, path = graph_file
    row = _row(path, f"cuda_fault_engines:{engine}")
    assert row["status"] == "error"
    assert row["message"].startswith(text.format(path=path)), row["message"]
    assert "\n" not in row["message"]
    assert row["count"] is None and row["fingerprint"] is None and row["algo_s"] == []


@pytest.mark.cudasim
def test_cli_logs_one_line_naming_the_dataset(graph_file, tmp_path):
    """The rule's command (workflow/rules/engines.smk) with a run that runs out of memory
    (ENV switches the simulator on: the fault engine is a module:function, no spec)."""
    _, path = graph_file
    out = tmp_path / "runs" / "Marvel" / "cumbe-cuMBE.json"
    res = subprocess.run(
        [sys.executable, "-m", "mbebench", "run", "--dataset", "Marvel", "--run-id", "cumbe-cuMBE",
         "--graph", str(path), "--out", str(out), "--engine", "cuda_fault_engines:tiny_memory",
         "--params", json.dumps({"variant": "cuMBE"})],
        capture_output=True, text=True, env={**os.environ, **ENV}, timeout=300,
    )
    assert res.returncode == 0, res.stderr  # an error row is a result: the pipeline goes on
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("Marvel cumbe-cuMBE: error (DeviceMemoryError: ") and "bytes" in last
    row = json.loads(out.read_text())
    assert row["status"] == "error" and row["count"] is None
