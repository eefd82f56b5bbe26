"""Numba disk caches that notice edits to every source a kernel compiles in.

numba keys a cached kernel on the bytecode of the function itself and invalidates it
when the function's own file changes, but not when a function it calls from another
module changes (``mbebench.fingerprint`` in every engine, ``cumbe.layout`` in cuMBE):
after such an edit, or a pull that brings one, the old machine code keeps running and
its results are recorded.  :func:`keyed` adds a digest of the kernel's module and of
every repository module it reaches through its globals (transitively) to the cache
key, so any edit there is a cache miss and a fresh compile.

    @jitcache.keyed
    @njit(cache=True)
    def kernel(...): ...

or ``jitcache.keyed(cuda.jit(cache=True)(fn))`` for a dispatcher built at run time.
"""

from __future__ import annotations

import hashlib
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_digests: dict[str, str] = {}


OWN = ("mbebench", "baselines", "cumbe")


def _repo_file(module_name: str) -> Path | None:
    """The source of one of our modules (an installed numba or numpy is not one)."""
    mod = sys.modules.get(module_name)
    f = getattr(mod, "__file__", None)
    if not f or not f.endswith(".py"):
        return None
    p = Path(f).resolve()
    if module_name.split(".")[0] in OWN:
        return p
    inside = p.is_relative_to(ROOT) and not {".venv", "site-packages"} & set(p.parts)
    return p if inside else None


def modules_compiled_in(module_name: str) -> list[str]:
    """The module and every repository module reachable from its globals (sorted)."""
    seen: set[str] = set()
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in seen or _repo_file(name) is None:
            continue
        seen.add(name)
        for value in vars(sys.modules[name]).values():
            if isinstance(value, types.ModuleType):
                todo.append(value.__name__)
            else:
                owner = getattr(value, "__module__", None)
                if isinstance(owner, str):
                    todo.append(owner)
    return sorted(seen)


def sources_digest(module_name: str) -> str:
    """sha256 over the paths and bytes of :func:`modules_compiled_in` (memoised per process)."""
    if module_name not in _digests:
        h = hashlib.sha256()
        for name in modules_compiled_in(module_name):
            path = _repo_file(name)
            h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
        _digests[module_name] = h.hexdigest()
    return _digests[module_name]


def keyed(dispatcher, module: str | None = None):
    """Add the sources digest of the dispatcher's module to its disk-cache key.  ``module``:
    digest that module instead, for a kernel that a factory in one module makes from
    device functions made in others (:func:`cumbe.kernel.build` names its package)."""
    cache = getattr(dispatcher, "_cache", None)
    index_key = getattr(cache, "_index_key", None)
    if index_key is None:  # no disk cache (cache=False, the CUDA simulator)
        return dispatcher
    module_name = module or dispatcher.py_func.__module__

    def _index_key(sig, codegen):
        return (*index_key(sig, codegen), sources_digest(module_name))

    cache._index_key = _index_key
    return dispatcher
