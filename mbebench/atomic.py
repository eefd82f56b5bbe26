"""Write-then-rename, so a crash or kill never leaves a half-written result
where a later run (or Snakemake) would trust it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

_UMASK_LOCK = threading.Lock()
_TAG_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def current_umask() -> int:
    """The process's umask, read without changing it where Linux allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:  # elsewhere the only way is to set it and set it back
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    The file gets the mode a plain ``open`` would give it (0666 less the umask),
    not the 0600 it is made with, so that a group can read shared results.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # the file is made inside the try, under a name known before it exists: a stop signal
    # (raised as an exception by mbebench.cli) just after it is made still removes it
    tmp = None
    try:
        while True:
            tmp = path.parent / f".{path.name}.{_random_tag()}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                break
            except FileExistsError:
                tmp = None  # another's
        os.close(fd)
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise


def _random_tag() -> str:
    """Eight characters, as tempfile's names (remove_stale_temps matches them)."""
    return "".join(secrets.choice(_TAG_CHARS) for _ in range(8))


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | os.PathLike, obj) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    """Remove what a killed writer of ``path`` left beside it; return the removed paths.

    ``atomic_path`` temp files (``.<name>.XXXXXXXX.tmp``) and temp folders made
    with ``tempfile`` and the prefix ``.<name>.`` survive a ``kill -9``; a
    later writer of the same ``path`` calls this first, so they do not pile
    up.  The exact pattern (8 random characters) never matches another
    file's temps.  Only call it when no other process is writing ``path``.
    """
    path = Path(path)
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}(\.tmp)?")
    removed = []
    try:
        candidates = list(path.parent.iterdir())
    except FileNotFoundError:
        return removed
    for p in candidates:
        m = pattern.fullmatch(p.name)
        if not m:
            continue
        if m.group(1) and p.is_file():
            p.unlink(missing_ok=True)
        elif not m.group(1) and p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            continue
        removed.append(p)
    return removed
