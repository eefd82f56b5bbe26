"""The one interface every MBE engine implements.

An engine is a function ``run(graph: CSRGraph, **params) -> EngineResult``.
It enumerates the maximal bicliques (both sides non-empty) of ``graph`` and
reports their number and their fingerprint (:mod:`mbebench.fingerprint`).
``algo_seconds`` covers the enumeration only: no file I/O, no JIT compile
(engines report compile time separately in ``compile_seconds``).

An engine that cannot run in this environment (no CUDA device, say) raises
:class:`EngineSkipped`; the runner records that as a ``skipped`` row, which is
not a failure.  Any other exception becomes an ``error`` row, never a count.

``stats`` is free-form JSON for the plots; keys used across engines:
    ``worker_busy_s``: list[float], busy seconds per worker (process / block)
    ``worker_tasks``:  list[int], tasks handled per worker
    ``phases_s``:      dict[str, float], time per algorithm phase
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from mbebench.csr import CSRGraph


class EngineSkipped(RuntimeError):
    """The engine cannot run here (e.g. no CUDA device); not an error."""


@dataclass
class EngineResult:
    count: int
    fingerprint: int
    algo_seconds: float
    compile_seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)


class Engine(Protocol):
    def __call__(self, graph: CSRGraph, **params: Any) -> EngineResult: ...


# name -> "module:function".  Imported lazily so that, for example, the CPU
# engines never import numba-cuda.
ENGINES: dict[str, str] = {
    "imbea": "baselines.imbea:run",
    "parmbe": "baselines.parmbe:run",
    "cumbe": "cumbe.engine:run",
}


def get_engine(name: str) -> Engine:
    """A registered engine, or any importable ``"module:function"`` (your own engine)."""
    target = ENGINES.get(name, name)
    if ":" not in target:
        known = ", ".join(sorted(ENGINES))
        raise ValueError(f"unknown engine {name!r} (known: {known}, or 'module:function')")
    module, func = target.split(":", 1)
    return getattr(importlib.import_module(module), func)
