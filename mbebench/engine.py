"""The one interface every MBE engine implements, and the registry of engines.

An engine is a function ``run(graph: CSRGraph, **params) -> EngineResult``.
It enumerates the maximal bicliques (both sides non-empty) of ``graph`` and
reports their number and their fingerprint (:mod:`mbebench.fingerprint`).
``algo_seconds`` covers the enumeration only: no file I/O, no JIT compile
(engines report compile time separately in ``compile_seconds``).  An engine
that does not compute the fingerprint (a command-line engine) reports
``fingerprint=None``; its count is still cross-checked.

An engine that cannot run in this environment (no CUDA device, say) raises
:class:`EngineSkipped`; the runner records that as a ``skipped`` row, which is
not a failure.  Any other exception becomes an ``error`` row, never a count.

Each engine declares an :class:`~mbebench.spec.EngineSpec` (name, parameters
with defaults and limits, GPU, CPUs, entry function) in a module that imports
nothing heavy; :data:`ENGINES` maps the registered names to those specs.  The
pipeline passes every parameter explicitly, except that a ``None`` value means
"not set" and is left out of the call.

``stats`` is free-form JSON for the plots; keys used across engines:
    ``worker_busy_s``: list[float], busy seconds per worker (process / block)
    ``worker_tasks``:  list[int], tasks handled per worker
    ``phases_s``:      dict[str, float], time per algorithm phase
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from mbebench.csr import CSRGraph
from mbebench.spec import EngineSpec


class EngineSkipped(RuntimeError):
    """The engine cannot run here (e.g. no CUDA device); not an error."""


@dataclass
class EngineResult:
    count: int
    fingerprint: int | None
    algo_seconds: float
    compile_seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)


class WorkerPool:
    """A pool of worker processes an engine keeps warm across runs (ParMBE's processes,
    cuMBE's devices), as a context manager: closed (workers let finish) on a clean exit,
    terminated (workers killed) when the block raises.  Subclasses define both."""

    def close(self) -> None:
        raise NotImplementedError

    def terminate(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.terminate()


class Engine(Protocol):
    def __call__(self, graph: CSRGraph, **params: Any) -> EngineResult: ...


# name -> "module:SPEC".  Spec modules import no engine code, so planning a run
# never loads numba (or numba-cuda, for the CPU engines' runs).
ENGINES: dict[str, str] = {
    "imbea": "baselines.imbea_spec:SPEC",
    "parmbe": "baselines.parmbe_spec:SPEC",
    "cumbe": "cumbe.spec:SPEC",
    # published codes (mbebench.published): off unless their section says enabled: true
    "adambe": "mbebench.published.codes:ADAMBE",
    "oombea": "mbebench.published.codes:OOMBEA",
    "gmbe": "mbebench.published.codes:GMBE",
    "cumbe_orig": "mbebench.published.codes:CUMBE_ORIG",
}


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names."""
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{ref!r} is not a 'module:attribute' reference")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{ref!r}: module {module!r} has no attribute {attr!r}") from None
    return obj


def get_spec(name: str) -> EngineSpec:
    """The spec of a registered engine."""
    try:
        ref = ENGINES[name]
    except KeyError:
        known = ", ".join(ENGINES)
        raise ValueError(
            f"unknown engine {name!r} (known: {known}, or 'module:function')"
        ) from None
    spec = load(ref)
    if not isinstance(spec, EngineSpec) or spec.name != name:
        raise TypeError(f"{ref} is not the EngineSpec of {name!r}")
    return spec


def call_params(params: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of an engine call: ``None`` means "not set"."""
    return {k: v for k, v in params.items() if v is not None}


def get_engine(name: str) -> Engine:
    """A callable engine: a registered name (its spec's defaults filled in) or any
    importable ``"module:function"`` (your own engine) or ``"module:SPEC"``."""
    if name in ENGINES:
        spec = get_spec(name)
    elif ":" in name:
        obj = load(name)
        if not isinstance(obj, EngineSpec):
            return obj
        spec = obj
    else:
        get_spec(name)  # raises, naming the known engines
        raise AssertionError("unreachable")
    if spec.entry is None:
        raise ValueError(f"engine {spec.name!r} is a command line; run it with mbebench.runner")
    func = load(spec.entry)
    defaults = call_params(spec.defaults())

    @functools.wraps(func)
    def run(graph: CSRGraph, **params: Any) -> EngineResult:
        return func(graph, **{**defaults, **params})

    return run
