"""The instrumented build's figures (engine parameter ``instrument``): each warp's busy
seconds and tasks, and the run's seconds per phase of the search (the paper's Fig. 7)."""

from __future__ import annotations

import numpy as np


def of_run(kernels, arrays, kernel_s: float, workers: int, cuda=None) -> dict:
    """The per-warp busy time and per-phase seconds from the kernel's ``ph_out`` and
    ``tasks_out``; ``cuda`` None: the simulator, whose clock is perf_counter_ns."""
    ph = arrays["ph_out"].copy_to_host()
    tasks_w = arrays["tasks_out"].copy_to_host()
    hz = 1e9 if cuda is None else clock_hz(cuda)
    totals = ph[:, kernels.NPH].astype(np.float64)
    idle = ph[:, kernels.PH_IDLE].astype(np.float64)
    phases = {name: float(ph[:, i].sum() / hz) for i, name in enumerate(kernels.PHASES)}
    phases["other"] += float(idle.sum() / hz)
    # A warp that runs out of work leaves the kernel and stops counting, but its slot
    # stays idle until the last one ends; the paper counts that as "others".
    tail = max(0.0, workers * kernel_s - sum(phases.values()))
    phases["other"] += tail
    return {"clock_hz": hz, "worker": "warp",
            "worker_busy_s": [float(v) for v in (totals - idle) / hz],
            "worker_tasks": [int(v) for v in tasks_w], "tail_idle_s": tail, "phases_s": phases}


def clock_hz(cuda) -> float:
    return float(cuda.get_current_device().CLOCK_RATE) * 1e3  # kHz -> Hz
