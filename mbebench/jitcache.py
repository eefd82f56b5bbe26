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

import contextlib
import fcntl
import hashlib
import json
import os
import re
import sys
import types
from pathlib import Path

from mbebench import numba_cpu

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
        _digests[module_name] = _files_digest(_repo_file(n)
                                              for n in modules_compiled_in(module_name))
    return _digests[module_name]


def _files_digest(paths) -> str:
    """sha256 over the repository-relative path and the bytes of each file, in order."""
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def keyed(dispatcher, module: str | None = None, extra: tuple = ()):
    """Add the sources digest of the dispatcher's module to its disk-cache key.  ``module``:
    digest that module instead, for a kernel that a factory in one module makes from
    device functions made in others (:func:`cumbe.kernel.build` names its package);
    ``extra``: more of the key, for what changes the code but is neither source nor a
    numba option numba keys on (:func:`cumbe.kernel.build`'s build switches)."""
    numba_cpu.start()  # before numba's CPU target starts: 0.2-0.8 s less
    cache = getattr(dispatcher, "_cache", None)
    index_key = getattr(cache, "_index_key", None)
    if index_key is None:  # no disk cache (cache=False, the CUDA simulator)
        return dispatcher
    module_name = module or dispatcher.py_func.__module__

    def _index_key(sig, codegen):
        return (*index_key(sig, codegen), sources_digest(module_name), *extra)

    cache._index_key = _index_key
    _serialise(cache._cache_file)
    return dispatcher


@contextlib.contextmanager
def file_lock(path):
    """An exclusive lock on the lock file ``path`` (made, with its folder), between processes
    and between threads that each hold a file of their own; closing the file releases it.
    Raises OSError where the folder or its file system refuses one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _lock_if_allowed(path) -> contextlib.ExitStack:
    """:func:`file_lock`, or nothing where it is refused (a read-only cache, NFS without
    locks): numba's cache then works, or fails, as it does without, never fails a compile."""
    stack = contextlib.ExitStack()
    with contextlib.suppress(OSError):
        stack.enter_context(file_lock(path))
    return stack


def _serialise(cache_file) -> None:
    """Make numba's index-and-data cache file safe for several processes at once.

    Every build of a factory's kernel (cuMBE's variants, ParMBE's work-analysis builds) is
    one function to numba, so all of them share one index file.  numba's ``save`` reads the
    index, picks the first data-file number not in it, writes the index and then the data:
    two processes saving different builds at once can both pick number 1, and the index of
    one then names the data of the other, a kernel of another build served from the cache
    (found as a crash in a ParMBE build; for cuMBE it would be a wrong count).  The lock
    makes each save and load one step, across processes."""
    lock = os.path.join(cache_file._cache_path, cache_file._index_name + ".lock")
    save, load = cache_file.save, cache_file.load

    def locked_save(key, data):
        with _lock_if_allowed(lock):
            return save(key, data)

    def locked_load(key):
        with _lock_if_allowed(lock):
            return load(key)

    cache_file.save, cache_file.load = locked_save, locked_load


def _module_file(name: str) -> Path | None:
    """The source file of repository module ``name``, found without importing it."""
    if name.split(".")[0] not in OWN:
        return None
    base = ROOT.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


# where an import statement starts: at the start of a line, or after a ";" or ":" (then the
# whole file is parsed)
_IMPORT_AT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+[.\w]+[ \t]+import|import[ \t])", re.M)
_IMPORT_INLINE = re.compile(rb"[;:][ \t]*(?:from|import)[ \t]")


def _import_statements(source: bytes) -> list:
    """The import statements of ``source``, parsed: only the lines that start one (with
    their parenthesised or backslashed continuation), so that a run's start does not parse
    the kernel's 2000 lines; the whole file where an import may follow a ";" or ":"."""
    import ast

    if _IMPORT_INLINE.search(source):
        return [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Import,
                                                                            ast.ImportFrom))]
    out = []
    for m in _IMPORT_AT_LINE.finditer(source):
        end = m.start()
        while True:
            nl = source.find(b"\n", end)
            end = len(source) if nl < 0 else nl + 1
            text = source[m.start():end]
            if not (text.count(b"(") > text.count(b")") or text.rstrip().endswith(b"\\")):
                break
            if nl < 0:
                break
        try:
            out += ast.parse(source[m.start():end].strip()).body
        except SyntaxError:  # prose in a docstring that reads like an import
            continue
    return out


def _imported_names(path: Path, name: str) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (a function's late import
    too), and every ``from X import y`` as both X and X.y (y may be a submodule)."""
    import ast

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _import_statements(path.read_bytes()):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            mod = ".".join(filter(None, [base, node.module or ""]))
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def imported_modules(*module_names: str) -> list[str]:
    """The named repository modules and every repository module they import, transitively
    (with the packages above them), read from their source files without importing any."""
    seen: set[str] = set()
    todo = list(module_names)
    while todo:
        name = todo.pop()
        path = _module_file(name)
        if name in seen or path is None:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(_imported_names(path, name))
    return sorted(seen)


def imports_digest(*module_names: str, memo: bool = True) -> str:
    """sha256 over the paths and bytes of :func:`imported_modules` (memoised per process;
    ``memo=False``: read now, and not kept).
    Unlike :func:`sources_digest` it does not depend on what this process has imported, so a
    process that never imports numba computes the same key as one that compiled the code
    (the launch from a cached cubin, :mod:`cumbe.cubin`; the preparation's cache,
    :mod:`cumbe.prepare`); it covers more (every import, not only what the globals reach),
    so it misses more, never less."""
    key = "imports:" + ",".join(module_names)
    if memo and key in _digests:
        return _digests[key]
    digest = _files_digest(sorted({_module_file(n) for n in imported_modules(*module_names)}))
    if memo:
        _digests[key] = digest
    return digest


# Caches of compiled code of our own, beside numba's (cumbe.cubin's cubins, ParMBE's
# ahead-of-time extension): where they live and what their keys share.

def beside_numba_cache(name: str, default: Path) -> Path:
    """``$NUMBA_CACHE_DIR/<name>``, else ``default`` (a package's ``__pycache__``, where numba
    keeps its own cache by default)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / name
    return default


def numba_environment() -> dict:
    """The ``NUMBA_*`` variables but the cache's folder: they change what numba compiles."""
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith("NUMBA_") and k != "NUMBA_CACHE_DIR"}


def key_digest(key: dict) -> str:
    """A cache entry's name from its key (32 hex digits of the sorted JSON's sha256)."""
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
