"""The real cuMBE engine with one CUDA fault injected, for the runner's GPU fault tests.

Run in numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) as ``cuda_fault_engines:<name>``
inside the runner's child process (tests put this folder on PYTHONPATH).  Each
fault is injected where the simulator stands in for the driver, the way the driver
reports it on a GPU; the engine's own code runs unchanged.  An engine that sees the
kernel launched when it must not have been raises AssertionError, so a broken guard
shows up in the row's message.
"""

from numba import cuda
from numba.cuda.cudadrv.driver import CudaAPIError  # the simulator's class in the simulator
from numba.cuda.simulator.cudadrv import devices

import cumbe.engine
import cumbe.kernel

SMALL = dict(threads=32)  # the simulator runs one Python thread per lane
launches = {"n": 0}


def _driver_error(call, code):
    return CudaAPIError(f"Call to {call} results in {code}")


def _counting_build(real_build, launcher=None):
    """K.build whose kernels count their launches; ``launcher`` replaces the launch."""

    def build(*args, **kwargs):
        kern = real_build(*args, **kwargs)

        class Counted:
            def __getitem__(self, grid):
                def go(*kargs):
                    launches["n"] += 1
                    return (launcher or kern[grid])(*kargs)

                return go

        return Counted()

    return build


def _run_expecting_no_launch(graph, **params):
    cumbe.kernel.build = _counting_build(cumbe.kernel.build)
    try:
        return cumbe.engine.run(graph, **{**SMALL, **params})
    finally:
        if launches["n"]:
            raise AssertionError(f"the kernel was launched {launches['n']} times")


def plain(graph, **params):
    return cumbe.engine.run(graph, **{**SMALL, **params})


def tiny_memory(graph, **params):
    # free device memory smaller than the estimate: the check must stop the run before launch
    devices.FakeCUDAContext.get_memory_info = lambda self: devices._MemoryInfo(64, 1 << 20)
    return _run_expecting_no_launch(graph, **params)


def alloc_oom(graph, **params):
    # the estimate fits, then an allocation fails the way cuMemAlloc reports it
    real, calls = cuda.to_device, {"n": 0}

    def to_device(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3:
            raise _driver_error("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY")
        return real(*args, **kwargs)

    cuda.to_device = to_device
    return _run_expecting_no_launch(graph, **params)


def launch_fails(graph, **params):
    # cuda.core's check of a cooperative grid past the device's limit
    def refuse(*_):
        raise ValueError("The specified grid size (600 * 1 * 1) exceeds the limit (528)")

    cumbe.kernel.build = _counting_build(cumbe.kernel.build, refuse)
    return cumbe.engine.run(graph, **{**SMALL, **params})


def sync_fails(graph, **params):
    # the kernel runs, then the synchronize after it reports a fault in the kernel
    def synchronize():
        if launches["n"]:
            raise _driver_error("cuCtxSynchronize", "CUDA_ERROR_ILLEGAL_ADDRESS")

    cuda.synchronize = synchronize
    cumbe.kernel.build = _counting_build(cumbe.kernel.build)
    return cumbe.engine.run(graph, **{**SMALL, **params})


def never_runs(graph, **params):
    # a launch that returns without running anything leaves zeroed result buffers
    cumbe.kernel.build = _counting_build(cumbe.kernel.build, lambda *_: None)
    return cumbe.engine.run(graph, **{**SMALL, **params})
