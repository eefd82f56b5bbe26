"""Shared fixtures.

``shared_dir``: the workspace's ``../shared`` (paper, KONECT mirror).  Tests
that need it skip with a reason when it is absent, e.g. on a user's clone.
Set ``MBE_SHARED`` to point elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    return Path(os.environ.get("MBE_SHARED", REPO.parent / "shared"))


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    d = _shared()
    if not d.is_dir():
        pytest.skip(f"needs the workspace's shared/ folder ({d} not found; set MBE_SHARED)")
    return d


@pytest.fixture(scope="session")
def konect_mirror(shared_dir) -> Path:
    d = shared_dir / "konect-mirror"
    if not (d / "SHA256SUMS").is_file():
        pytest.skip(f"needs the KONECT mirror at {d}")
    return d
