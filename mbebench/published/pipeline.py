"""What the Snakemake rules of the published codes ask (workflow/rules/published.smk).

A run of a published code needs its build's receipt, the build needs its repository's
download receipt; both are files under ``resources/engines/`` (:mod:`mbebench.published`).
"""

from __future__ import annotations

from pathlib import Path

from mbebench import dataset_status, paths
from mbebench.published import build, fetch
from mbebench.published.codes import CODES
from mbebench.published.engine import ENGINES_DIR


def build_receipt(engine: str) -> str | None:
    """The build receipt a run of ``engine`` waits for; None for an engine of our own."""
    code = CODES.get(engine)
    return None if code is None else f"{ENGINES_DIR}/{code.build_dir}/build.json"


def download_receipt(code: str) -> str:
    return paths.published_receipt(CODES[code].repo.slug)


def slugs() -> list[str]:
    return sorted({c.repo.slug for c in CODES.values()})


def names() -> list[str]:
    return sorted(CODES)


def download_retry(slug: str) -> str:
    """The download's retry token: the next number while its receipt says failed."""
    return dataset_status.retry_token(paths.published_receipt(slug))


def build_retry(code: str, commit: str) -> str:
    """The build's retry token: the next number while its receipt says failed, so that a
    fixed toolchain builds the code on the next run.  A skipped build (no toolchain or GPU
    here) stays: it would be skipped again, and its runs' skipped rows redone every time."""
    path = paths.build_receipt(code, commit)
    receipt = dataset_status.read_status(path)
    if receipt is not None and receipt.get("status") == "skipped":
        return str(receipt.get("retry", 0))
    return dataset_status.retry_token(path)


def built(code: str) -> bool:
    """Whether ``code`` is built here, from its pinned commit and patches: then a download
    that runs again (a new version of its rule, a forced run) does not redo the build, nor
    every run after it (the rule takes the download receipt as an ancient input)."""
    root = Path(ENGINES_DIR)
    receipt = fetch.read_receipt(build.receipt_path(root, CODES[code]))
    return bool(receipt) and receipt.get("status") == "ok" \
        and build.current(root, CODES[code], receipt)
