"""The simulator's block barrier without polling (cumbe/sim_barrier.py) keeps numba's
semantics: a barrier opens when every live thread of the block waits at it (threads that
ended no longer count), its counting forms work, a thread that raises aborts the block and its
exception reaches the launch, and blocks run one after another.  In a child process: the
simulator is switched on before numba.cuda is imported."""

from __future__ import annotations

from simulated import run_simulated

CHILD = r"""
import numpy as np
from numba import cuda
import cumbe.kernel.sync  # installs the barrier (cumbe.sim_barrier)
from numba.cuda.simulator import kernel as k
assert getattr(k.BlockManager.run, "cumbe_barrier", False)


@cuda.jit
def ordered(out, order):
    # thread t writes its slot, then every thread reads all slots after the barrier; the
    # upper half ends early, and the lower half's second barrier must still open
    t = cuda.threadIdx.x
    sh = cuda.shared.array(64, np.int64)
    sh[t] = t + 1
    cuda.syncthreads()
    s = 0
    for i in range(64):
        s += sh[i]
    out[cuda.blockIdx.x, t] = s
    if t >= 32:
        return
    order[cuda.blockIdx.x, t] = cuda.syncthreads_count(t % 2 == 0)


out = np.zeros((3, 64), np.int64)
order = np.zeros((3, 32), np.int64)
ordered[3, 64](out, order)
assert (out == 64 * 65 // 2).all(), out
assert (order == 16).all(), order


@cuda.jit
def fails(out):
    t = cuda.threadIdx.x
    cuda.syncthreads()
    if t == 5:
        out[10 ** 6] = 1  # out of bounds: the simulator raises in this thread
    cuda.syncthreads()
    out[t] = 1


try:
    fails[1, 32](np.zeros(32, np.int64))
except IndexError as e:
    assert "tid=[5, 0, 0]" in str(e), e
    print("raised", flush=True)
print("done", flush=True)
"""


def test_the_barrier_keeps_the_simulators_semantics():
    p = run_simulated(CHILD, 600)  # a hang guard: a wrong barrier never opens
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split() == ["raised", "done"], p.stdout + p.stderr[-3000:]
