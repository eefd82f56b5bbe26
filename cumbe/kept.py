"""What a device worker keeps across the shards of one job (:mod:`cumbe.device_worker`): the
graph's device copies, every other device buffer with its room, the progress readers' pinned
host buffers, the streams and the kernel's timing events.

Why: every allocation, free, pinned allocation, stream and event is a call into the driver,
about 40 a shard before; with these kept a shard after the first allocates nothing unless it
needs more room than an earlier one.  With four workers at once a shard's host set-up took
0.15-0.22 s (4 H100s, tiled movielens-10m_ui); most of that turned out to be the preparation's
check and BLAS threads (:func:`cumbe.single_device._prepare`, :mod:`mbebench.side`).  After
all three changes a later shard's set-up takes 0-26 ms (median 4-9 ms, `6d34f09`); this
module's own share was not measured apart.

A buffer is kept flat and handed out as a view of the shape asked for.  A run plans its grid
with the kept device bytes counted as free (:meth:`Kept.held_bytes`): they are its own.
:meth:`Kept.fit` drops the kept buffers (to be freed and allocated to measure) when reusing
them would hold more than the run's memory budget, so that a memory cap stays a cap.
"""

from __future__ import annotations

import numpy as np


class Kept:
    def __init__(self) -> None:
        self.graph: dict = {}  # buffer name -> (host array, its device copy)
        self.device: dict = {}  # buffer name -> flat device array
        self.pinned: dict = {}  # name -> flat pinned host array
        self.streams: dict = {}
        self.events: dict = {}
        # the checked preparation's candidate offsets: every shard's preparation shares them
        # (cumbe.prepare.take), so a later shard skips the check (it reads the whole graph)
        self.prepared = None

    def held_bytes(self) -> int:
        """Device bytes held for the next run (graph copies and buffers)."""
        return (sum(int(d.nbytes) for _, d in self.graph.values())
                + sum(int(d.nbytes) for d in self.device.values()))

    def fit(self, need: dict, budget: int) -> None:
        """``need``: bytes of each buffer a run is about to take; drop every kept buffer
        when reusing the larger ones would hold more than ``budget`` bytes."""
        held = sum(int(d.nbytes) for _, d in self.graph.values())
        for name, n in need.items():
            d = self.device.get(name)
            held += max(int(n), int(d.nbytes)) if d is not None else int(n)
        if held > budget:
            self.device.clear()

    def array(self, cuda, name: str, shape: tuple, dtype) -> object:
        """A device array of ``shape``: a view of the kept one when it has the room."""
        return _view(self.device, name, shape, dtype, cuda.device_array)

    def pinned_array(self, cuda, name: str, shape: tuple, dtype) -> np.ndarray:
        return _view(self.pinned, name, shape, dtype, cuda.pinned_array)

    def stream(self, cuda, name: str):
        if name not in self.streams:
            self.streams[name] = cuda.stream()
        return self.streams[name]

    def event(self, cuda, name: str):
        if name not in self.events:
            self.events[name] = cuda.event()
        return self.events[name]


def _view(store: dict, name: str, shape: tuple, dtype, alloc):
    """``store[name]`` viewed as ``shape``, first (re)made flat by ``alloc`` when it is missing,
    too small or of another dtype (the old one dropped before: device memory is freed first)."""
    n = int(np.prod(shape))
    a = store.get(name)
    if a is None or a.size < n or a.dtype != np.dtype(dtype):
        store.pop(name, None)
        a = store[name] = alloc(max(n, 1), dtype=dtype)
    return a[:n].reshape(shape)
