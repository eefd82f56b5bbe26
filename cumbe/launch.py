"""The checked device steps of a cuMBE run: memory check, grid size, launch.

A failure here must never turn into a count: the engine raises, the runner
records an ``error`` row (mbebench.runner).  Messages are one line naming the
graph's CSR file (hence the dataset), because that line is the row's message
and the Snakemake log line.  Nothing here imports numba: the engine passes its
``cuda`` module in, so tests can hand in fakes.  See docs/reliability.md.
"""

from __future__ import annotations

import contextvars
import functools
import math
import time

from cumbe.kept import Kept
from mbebench import envvars

# Errors after which the CUDA context is unusable until the process exits
# (CUDA driver API docs); the runner gives every engine run its own process.
STICKY = (
    "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT", "CUDA_ERROR_ECC_UNCORRECTABLE",
)
# numba-cuda, its simulator and cuda.core each define their own classes with these
# names (driver.CudaAPIError, simulator CudaAPIError, cuda.core CUDAError ...)
_CUDA_ERROR_NAMES = frozenset({
    "CudaAPIError", "CudaDriverError", "CudaSupportError", "CudaRuntimeError", "LinkerError",
    "DeadMemoryError", "NvvmError", "NvrtcError", "CUDAError",
})
# Test-only: launch the requested grid even past the cooperative limit, so that
# benchmarks/gpu/faults.py can make a real impossible launch reach the driver.
UNCLAMPED_ENV = "MBEBENCH_TEST_UNCLAMPED_GRID"
# the last memory check of this run, for the message when an allocation fails anyway
_checked = contextvars.ContextVar("cumbe_memory_checked", default=None)


class DeviceMemoryError(MemoryError):
    """Not enough device memory for the run: found by the estimate, or an allocation failed."""


class LaunchError(RuntimeError):
    """The kernel was not launched or did not complete: there is no result."""


class DeviceError(RuntimeError):
    """Any other CUDA failure during a run."""


def graph_label(graph) -> str:
    if graph.path:
        return str(graph.path)
    return f"graph ({graph.n_left}+{graph.n_right} vertices, {graph.n_edges} edges)"


def one_line(e: BaseException) -> str:
    # CudaSupportError and NvvmError put the useful part on later lines
    text = " ".join(str(e).split())
    text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text if len(text) <= 400 else text[:397] + "..."


def _num(x) -> str:
    return str(int(x)) if isinstance(x, (int, float)) and math.isfinite(x) else str(x)


def device_memory(cuda) -> tuple:
    """(free, total) bytes, after freeing what numba still holds for dead arrays:
    the previous repeat's arrays would otherwise count as used."""
    ctx = cuda.current_context()
    # freed device arrays wait in the memory manager's queue, streams and events in the
    # context's; neither exists in the simulator
    for owner in (getattr(ctx, "memory_manager", None), ctx):
        pending = getattr(owner, "deallocations", None)
        if pending is not None:
            pending.clear()
    free, total = ctx.get_memory_info()
    return free, total


def check_memory(need: int, free, total, what: str, detail: str = "") -> None:
    _checked.set((int(need), free))
    if need > free:
        raise DeviceMemoryError(
            f"{what}: cuMBE needs {int(need)} bytes ({need / 2**30:.2f} GiB) of device memory"
            + (f" for {detail}" if detail else "")
            + f", only {_num(free)} free of {_num(total)}; try: {hint('OUT_OF_MEMORY')}"
        )


def grid_blocks(requested: int, max_blocks: int, threads: int, device: str) -> int:
    """Blocks to launch: 0 = the largest cooperative grid, a larger request is
    clamped (the engine reports that in its stats)."""
    if max_blocks < 1:
        raise LaunchError(f"cuMBE kernel cannot run {threads} threads per block on {device}")
    if requested > 0 and envvars.get(UNCLAMPED_ENV) == "1":
        return requested
    return max_blocks if requested <= 0 else min(requested, max_blocks)


# What a user can do about a kernel fault (the driver's sticky errors, or an error the
# kernel reports itself).
FAULT_HINT = ("a kernel fault is a cuMBE bug, not a property of the graph: report this line; "
              "the CPU engines (parmbe, imbea) count the graph meanwhile")
# What a user can do about a failed launch, by what the driver said (first match wins).
HINTS = (
    (("COOPERATIVE_LAUNCH_TOO_LARGE", "exceeds the limit"),
     "try a smaller --blocks (0 picks the largest grid the device allows)"),
    (("OUT_OF_MEMORY",),
     "free the GPU (another process holds memory: nvidia-smi) or set --device-memory-gib to "
     "what is really free"),
    (STICKY, FAULT_HINT),
)


def hint(reason: str) -> str:
    for needles, text in HINTS:
        if any(n in reason for n in needles):
            return text
    return "rerun once; if it repeats, report this line"


def checked_launch(kernel, blocks: int, threads: int, args, *, cuda, what: str, device: str,
                   events: bool = True, context: str = "", progress=None, kept=None) -> float:
    """Launch, wait for the kernel to finish, return its seconds (CUDA events, or
    host time when ``events`` is false, as in the simulator).  Any failure on the
    way is a :class:`LaunchError`: the caller has no result to read.  ``context``
    (the run's variant, arena and memory cap) and what to try end the message.
    ``progress`` (:class:`cumbe.progress.Progress`): while the kernel runs, wait for its
    end event and print progress lines (with events only: the simulator runs the
    kernel within the launch call).  ``kept`` (:class:`cumbe.kept.Kept`): the stream and
    events of an earlier launch, reused."""
    stage = "failed before launch"  # the first synchronize surfaces errors of the setup copies
    try:
        cuda.synchronize()
        stage = "launch failed"
        if progress is not None:
            progress.start()
        if events:
            # a stream of its own: the progress reader copies the kernel's counters on
            # another one while it runs (the default stream would wait for the kernel)
            keep = kept if kept is not None else Kept()  # (a fresh one: this launch's own)
            stream = keep.stream(cuda, "kernel")
            e0, e1 = keep.event(cuda, "start"), keep.event(cuda, "end")
            e0.record(stream)
            kernel[blocks, threads, stream](*args)
            stage = "failed while running"  # any later call may be the one to report a fault
            e1.record(stream)
            if progress is not None:
                progress.wait(e1, cuda.current_context() if hasattr(cuda, "current_context")
                              else None)
            e1.synchronize()
            cuda.synchronize()
            return cuda.event_elapsed_time(e0, e1) / 1e3
        t0 = time.perf_counter()
        kernel[blocks, threads](*args)
        stage = "failed while running"
        cuda.synchronize()
        return time.perf_counter() - t0
    except Exception as e:
        reason = one_line(e)
        sticky = any(name in reason for name in STICKY)
        raise LaunchError(
            f"{what}: cuMBE kernel {stage} on {device} (grid {blocks} x {threads} threads): "
            f"{reason}"
            + ("; the CUDA context is unusable until the process exits" if sticky else "")
            + (f"; run: {context}" if context else "")
            + f"; try: {hint(reason)}"
        ) from e


def check_ran(nodes: int, tasks: int, what: str) -> None:
    """Every task visits at least its own node: zero nodes for a non-empty task
    list means the kernel never ran, and its zeroed result buffers are no count."""
    if tasks > 0 and nodes <= 0:
        raise LaunchError(
            f"{what}: cuMBE kernel left no trace ({tasks} tasks, 0 nodes visited): it did not run"
        )


def _is_cuda_error(e: BaseException) -> bool:
    return any(c.__name__ in _CUDA_ERROR_NAMES for c in type(e).__mro__)


def named_device_errors(run):
    """Decorator for the engine's ``run(graph, ...)``: a CUDA error escaping it
    (context creation, allocation, module load, copies) becomes one line naming
    the graph; running out of device memory becomes :class:`DeviceMemoryError`."""

    @functools.wraps(run)
    def wrapper(graph, *args, **kwargs):
        _checked.set(None)
        try:
            return run(graph, *args, **kwargs)
        except (DeviceMemoryError, LaunchError, DeviceError):
            raise
        except Exception as e:
            if not _is_cuda_error(e):
                raise
            if "CUDA_ERROR_OUT_OF_MEMORY" in str(e):
                checked = _checked.get()
                estimate = (
                    f" (estimated need {checked[0]} bytes, {_num(checked[1])} free when checked)"
                    if checked else ""
                )
                raise DeviceMemoryError(
                    f"{graph_label(graph)}: out of device memory{estimate}: {one_line(e)}"
                ) from e
            raise DeviceError(f"{graph_label(graph)}: CUDA error: {one_line(e)}") from e

    return wrapper
