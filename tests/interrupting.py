"""Helpers for the tests that interrupt a command line mid-write and check what it left."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def files_in(d: Path, missing_ok: bool = False) -> list[str]:
    """The names in folder ``d``, sorted ([] for a missing folder only with ``missing_ok``)."""
    if missing_ok and not d.exists():
        return []
    return sorted(p.name for p in d.iterdir())


def sigterm_once_started(proc: subprocess.Popen, started: Callable[[], bool], what: str) -> str:
    """Send SIGTERM to ``proc`` as soon as ``started()`` holds (it made its temp file);
    return its stderr.  Fails if it does not start within 20 s or ends before that."""
    try:
        t = time.monotonic()
        while not started():
            assert time.monotonic() - t < 20 and proc.poll() is None, f"{what} never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    return err
