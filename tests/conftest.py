"""Shared fixtures.

``shared_dir``: the shared data folder, ``../shared`` beside the checkout or ``MBEBENCH_SHARED``:
a KONECT mirror (``konect-mirror/download.tsv.<name>.tar.bz2`` and ``SHA256SUMS``), the
paper's dataset table (``datasets.md``) and the mirror's sources (``konect/SOURCES.md``).
Tests that need it skip with a reason saying what it is and where docs/testing.md tells
how to make one, e.g. on a user's clone.

``MBEBENCH_REQUIRE`` (comma list of ``mirror``, ``slurm``, ``latex``; ``.ci/run`` sets all
three) turns a skip of such a test into a failure: in CI a vanished prerequisite must
not pass as green.  A test is a ``mirror`` test when it uses ``shared_dir`` or
``konect_mirror`` or is marked so; ``slurm`` and ``latex`` go by the mark.

Every ``cudasim`` test is also ``slow`` (:func:`pytest_collection_modifyitems`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mbebench import envvars

REPO = Path(__file__).resolve().parents[1]


def _shared() -> Path:
    return Path(envvars.get("MBEBENCH_SHARED") or REPO.parent / "shared")


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    d = _shared()
    if not d.is_dir():
        pytest.skip(f"{SHARED_WHAT}; {d} not found: {SHARED_HOW}")
    return d


# What the skip says (one line): what the folder holds, and how to get or point at one.
SHARED_WHAT = ("needs the shared data folder (real KONECT archives as "
               "konect-mirror/download.tsv.<name>.tar.bz2 with SHA256SUMS, the paper's "
               "datasets.md, konect/SOURCES.md)")
SHARED_HOW = ("docs/testing.md says how to build one; set MBEBENCH_SHARED=<folder> "
              "(default: ../shared beside the checkout)")


@pytest.fixture(scope="session")
def konect_mirror(shared_dir) -> Path:
    d = shared_dir / "konect-mirror"
    if not (d / "SHA256SUMS").is_file():
        pytest.skip(f"needs a KONECT mirror: {d}/SHA256SUMS not found (KONECT archives "
                    f"download.tsv.<name>.tar.bz2 and their checksums): {SHARED_HOW}")
    return d


REQUIRE_ENV = "MBEBENCH_REQUIRE"
REQUIRABLE = ("mirror", "slurm", "latex")


def required() -> set[str]:
    kinds = {k.strip() for k in os.environ.get(REQUIRE_ENV, "").split(",") if k.strip()}
    unknown = kinds - set(REQUIRABLE)
    if unknown:
        raise pytest.UsageError(f"{REQUIRE_ENV}: unknown kind(s) {sorted(unknown)}; "
                                f"known: {', '.join(REQUIRABLE)}")
    return kinds


def pytest_configure(config):
    required()  # a misspelt kind fails at once rather than requiring nothing


def pytest_collection_modifyitems(config, items):
    """A kernel in numba's simulator is slow: every ``cudasim`` test is ``slow`` too, so that
    ``-m "not slow"`` (the developers' fast path, docs/development.md) runs none of them."""
    for item in items:
        if item.get_closest_marker("cudasim") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


def kinds_of(item) -> set[str]:
    kinds = {m.name for m in item.iter_markers()} & set(REQUIRABLE)
    if {"shared_dir", "konect_mirror"} & set(getattr(item, "fixturenames", ())):
        kinds.add("mirror")
    return kinds


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    needed = kinds_of(item) & required()
    if needed:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = (f"skipped, but {REQUIRE_ENV} requires {', '.join(sorted(needed))} "
                           f"tests to run: {reason}")
