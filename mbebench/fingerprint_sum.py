"""A run's fingerprint as plain Python: a sum of biclique hashes mod 2**64, and its text form.

Kept apart from :mod:`mbebench.fingerprint` (the hashes, compiled with numba) so that the
pieces that only add fingerprints up or write them into rows (gather, the worker pools)
need no compiler.
"""

from __future__ import annotations

from collections.abc import Iterable

MASK64 = (1 << 64) - 1  # the fingerprint is a sum mod 2**64


def add(total: int, fp: int) -> int:
    """``total + fp`` mod 2**64: how two parts' fingerprints (shards, tasks) make the whole."""
    return (int(total) + int(fp)) & MASK64


def to_hex(fp: int) -> str:
    """Canonical text form used in result rows (JSON has no uint64)."""
    return f"0x{int(fp) & MASK64:016x}"


def from_hex(text: str) -> int:
    return int(text, 16)


def sum_hex(texts: Iterable[str]) -> str:
    """The text form of the sum of fingerprints given in text form (one per shard)."""
    return to_hex(sum(from_hex(t) for t in texts))
