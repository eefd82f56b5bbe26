"""What the Snakemake rules of the published codes ask (workflow/rules/published.smk).

A run of a published code needs its build's receipt, the build needs its repository's
download receipt; both are files under ``resources/engines/`` (:mod:`mbebench.published`).
"""

from __future__ import annotations

from mbebench import ingest
from mbebench.published.codes import CODES
from mbebench.published.engine import ENGINES_DIR


def build_receipt(engine: str) -> str | None:
    """The build receipt a run of ``engine`` waits for; None for an engine of our own."""
    code = CODES.get(engine)
    return None if code is None else f"{ENGINES_DIR}/{code.build_dir}/build.json"


def download_receipt(code: str) -> str:
    return f"{ENGINES_DIR}/archives/{CODES[code].repo.slug}.json"


def slugs() -> list[str]:
    return sorted({c.repo.slug for c in CODES.values()})


def names() -> list[str]:
    return sorted(CODES)


def download_retry(slug: str) -> str:
    """The download's retry token: the next number while its receipt says failed."""
    return ingest.retry_token(f"{ENGINES_DIR}/archives/{slug}.json")


def build_retry(code: str, commit: str) -> str:
    """The build's retry token: the next number while its receipt is not ok, so that a
    machine that gained the toolchain builds the code on the next run."""
    return ingest.retry_token(f"{ENGINES_DIR}/{code}-{commit}/build.json")
