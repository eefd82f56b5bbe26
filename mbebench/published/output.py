"""Reading a published code's count and its own time from what it prints.

Each parser takes the program's stdout and returns ``(count, seconds)``; a
:class:`OutputError` says, in one line, what was missing.  A code that counts (or prints
its count) in 32 bits is flagged by :func:`check_width` when its count cannot be one:
past 2^31 - 1, or negative (a wrapped ``int`` printed with ``%d``).
"""

from __future__ import annotations

import re

INT32_MAX = 2**31 - 1


class OutputError(RuntimeError):
    """The program's output holds no count or no time."""


class CountsIn32Bits(RuntimeError):
    """A 32-bit count that cannot be the count: never taken as the truth."""


def _csv_line(stdout: str, finder: str, count_at: int, time_at: int) -> tuple[int, float]:
    # "<graph>, <finder>, <seconds>, <MB>, <count>, ..." (AdaMBE's PrintResult, ooMBEA's main)
    for line in reversed(stdout.splitlines()):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) > max(count_at, time_at) and parts[1].endswith(finder):
            try:
                return int(parts[count_at]), float(parts[time_at])
            except ValueError:
                break
    raise OutputError(f"printed no '<graph>, {finder}, <seconds>, ..., <count>, ...' line")


def adambe(stdout: str) -> tuple[int, float]:
    return _csv_line(stdout, "MBEFinder", 4, 2)


def oombea(stdout: str) -> tuple[int, float]:
    return _csv_line(stdout, "ooMBEAFinder", 4, 2)


def _keyed(stdout: str, count_re: str, time_re: str, scale: float = 1.0) -> tuple[int, float]:
    count = re.findall(count_re, stdout, re.MULTILINE)
    secs = re.findall(time_re, stdout, re.MULTILINE)
    if not count or not secs:
        raise OutputError(f"printed no line matching {count_re if not count else time_re!r}")
    return int(count[-1]), float(secs[-1]) * scale


def gmbe(stdout: str) -> tuple[int, float]:
    return _keyed(stdout, r"^maximal nodes:\s*(-?\d+)",
                  r"^Total processing time:\s*([0-9.eE+-]+) seconds")


def cumbe_orig(stdout: str) -> tuple[int, float]:
    return _keyed(stdout, r"^maximal bicliques:\s*(-?\d+)", r"^runtime \(s\):\s*([0-9.eE+-]+)")


PARSERS = {"adambe": adambe, "oombea": oombea, "gmbe": gmbe, "cumbe_orig": cumbe_orig}


def check_width(name: str, count: int, bits: int) -> int:
    """``count``, unless a ``bits``-bit counter cannot have produced the true count."""
    if bits == 32 and not 0 <= count <= INT32_MAX:
        # short enough for a table cell whole; the docs say the count is not taken
        raise CountsIn32Bits(f"{name} counts in 32 bits: printed {count}")
    if count < 0:
        raise OutputError(f"{name} reported a negative count {count}")
    return count
