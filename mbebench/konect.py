"""Parser for KONECT bipartite edge lists (``out.*`` files).

Accepted format (every variant seen in KONECT downloads and their copies):

* lines whose first non-blank character is ``%`` are comments; the first one
  is kept as ``header`` (``% bip unweighted``, ``% bip\\tposweighted\\t2``,
  ``% 1476 829 551`` ...), none is required;
* blank lines are skipped;
* a data line has 2 to 4 columns ``left right [weight [timestamp]]``
  separated by spaces and/or tabs; trailing blanks, CRLF line ends and a
  leading UTF-8 BOM are fine (a CR anywhere else in a data line is not);
* ids are positive decimal integers below 2**31 (KONECT is 1-based); each
  side is renumbered on its own to 0..n-1 in order of the original id, so
  a shared id space (Marvel's right ids continue after the left ones) and
  gaps in the numbering are harmless;
* weight and timestamp are ignored, but must be made of number characters
  (``0-9 + - . e E``) so that text or binary junk is not silently taken for
  a column;
* repeated ``(left, right)`` pairs (multi-edges, ratings) count once.

Anything else raises :class:`KonectParseError` as ``"<file>:<line>: <reason>"``
(1-based line number, header lines included).

Two implementations share these rules: :func:`_fast` works on the whole file
with numpy and gives up (returns None) at the first sign of trouble;
:func:`_scan` is a plain line loop, run only then, that either finds the
first bad line or, if the fast path was merely conservative, parses the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_ID = 2**31 - 1
BOM = b"\xef\xbb\xbf"
_BLANK = b" \t\r"
_NUMBER_CHARS = b"0123456789+-.eE"
_SPLIT = re.compile(rb"[ \t\r]+")


class KonectParseError(ValueError):
    """A KONECT edge list that cannot be read; the message names file and line."""


@dataclass(frozen=True)
class EdgeList:
    left: np.ndarray  # int64[n_edges], 0-based left ids, sorted by (left, right)
    right: np.ndarray  # int64[n_edges], 0-based right ids
    n_left: int
    n_right: int
    n_edges: int  # distinct (left, right) pairs
    n_lines: int  # data lines (edges before dropping duplicates)
    n_duplicates: int
    header: str
    left_ids: np.ndarray  # int64[n_left]: left_ids[i] is the file's id of left vertex i
    right_ids: np.ndarray  # int64[n_right]


def parse_edge_list(path: str | Path, *, dataset: str | None = None) -> EdgeList:
    path = Path(path)
    prefix = f"dataset {dataset!r}: " if dataset else ""
    try:
        buf = path.read_bytes()
    except OSError as e:
        raise KonectParseError(f"{prefix}{path}: cannot read ({e.strerror})") from None
    # Line numbers stay right: the BOM sits inside line 1.
    if buf.startswith(BOM):
        buf = buf[len(BOM) :]
    parsed = _fast(buf)
    if parsed is None:
        parsed = _scan(buf, f"{prefix}{path}")
    left_orig, right_orig, n_lines, header = parsed
    if n_lines == 0:
        raise KonectParseError(f"{prefix}{path}: no edges")
    return _build(left_orig, right_orig, n_lines, header)


def _renumber(orig: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct ids, 0-based index of each entry among them)."""
    top = int(orig.max())
    # KONECT ids are nearly dense: a lookup table beats np.unique's argsort
    # by ~5x; sparse id spaces take the general route.
    if top <= 4 * orig.size + 1024:
        present = np.zeros(top + 1, dtype=bool)
        present[orig] = True
        rank = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present), rank[orig]
    ids, index = np.unique(orig, return_inverse=True)
    return ids, index.ravel()


def _build(left_orig: np.ndarray, right_orig: np.ndarray, n_lines: int, header: str) -> EdgeList:
    left_ids, left = _renumber(left_orig)
    right_ids, right = _renumber(right_orig)
    n_right = len(right_ids)
    key = np.unique(left.astype(np.int64) * n_right + right)
    left, right = key // n_right, key % n_right
    return EdgeList(
        left=left.astype(np.int64),
        right=right.astype(np.int64),
        n_left=len(left_ids),
        n_right=n_right,
        n_edges=len(key),
        n_lines=n_lines,
        n_duplicates=n_lines - len(key),
        header=header,
        left_ids=left_ids.astype(np.int64),
        right_ids=right_ids.astype(np.int64),
    )


def _decode_header(raw: bytes) -> str:
    return raw.strip(_BLANK).decode("utf-8", errors="replace")


# ----------------------------------------------------------------------------
# Slow path: the reference semantics, one line at a time.


def _scan(buf: bytes, where: str):
    lefts: list[int] = []
    rights: list[int] = []
    header = None
    for lineno, raw in enumerate(buf.split(b"\n"), start=1):
        line = raw.strip(_BLANK)
        if not line:
            continue
        if line.startswith(b"%"):
            if header is None:
                header = _decode_header(line)
            continue
        if b"\r" in raw[:-1]:
            # A lone CR would silently glue two lines into one 4-column line.
            raise KonectParseError(f"{where}:{lineno}: carriage return inside a line")
        reason, ids = _check_line(line)
        if reason:
            raise KonectParseError(f"{where}:{lineno}: {reason}")
        lefts.append(ids[0])
        rights.append(ids[1])
    return (
        np.array(lefts, dtype=np.int64),
        np.array(rights, dtype=np.int64),
        len(lefts),
        header or "",
    )


def _check_line(line: bytes) -> tuple[str | None, tuple[int, int] | None]:
    """(reason, None) for a bad data line, (None, (left, right)) otherwise."""
    if any((b < 0x20 and b not in (0x09, 0x0D)) or b >= 0x7F for b in line):
        return "binary or non-ASCII data in an edge line", None
    cols = _SPLIT.split(line)
    if not 2 <= len(cols) <= 4:
        return f"expected 2 to 4 columns, found {len(cols)}", None
    ids = []
    for side, tok in zip(("left", "right"), cols[:2]):
        reason, value = _check_id(tok)
        if reason:
            return f"{side} id {tok.decode()!r}: {reason}", None
        ids.append(value)
    for tok in cols[2:]:
        if tok.strip(_NUMBER_CHARS):
            return f"weight/timestamp column {tok.decode()!r} is not a number", None
    return None, (ids[0], ids[1])


def _check_id(tok: bytes) -> tuple[str | None, int]:
    if tok.isdigit():
        value = int(tok)
        if value == 0:
            return "ids must be positive (KONECT ids start at 1)", 0
        if value > MAX_ID:
            return "id too large (must be below 2**31)", 0
        return None, value
    if re.fullmatch(rb"-\d+", tok):
        return "ids must be positive (KONECT ids start at 1)", 0
    if re.fullmatch(rb"\+\d+", tok):
        return "explicit sign not allowed", 0
    if re.fullmatch(rb"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", tok):
        return "not an integer", 0
    return "not a number", 0


# ----------------------------------------------------------------------------
# Fast path: the same rules on the whole buffer with numpy.

_WS_LUT = np.zeros(256, dtype=bool)
_WS_LUT[list(b" \t\r\n")] = True
# Bytes allowed inside a data token; ids are further restricted to digits.
_BAD_DATA_LUT = np.ones(256, dtype=bool)
_BAD_DATA_LUT[list(_NUMBER_CHARS)] = False
_BAD_DATA_LUT[list(b" \t\r\n")] = False
_MAX_ID_DIGITS = len(str(MAX_ID))


def _tokens(a: np.ndarray):
    """(start, end, line index) of every blank-separated token."""
    ws = _WS_LUT[a]
    body = ~ws
    starts = np.flatnonzero(body & np.concatenate(([True], ws[:-1])))
    ends = np.flatnonzero(body & np.concatenate((ws[1:], [True]))) + 1
    newlines = np.flatnonzero(a == 0x0A)
    return starts, ends, np.searchsorted(newlines, starts), newlines


def _fast(buf: bytes):
    """Parse ``buf`` or return None if it breaks (or may break) a rule."""
    a = np.frombuffer(buf, dtype=np.uint8)
    if a.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), 0, ""
    starts, ends, line, newlines = _tokens(a)
    if starts.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), 0, ""
    first_of_line = np.concatenate(([True], line[1:] != line[:-1]))
    comment_line = first_of_line & (a[starts] == ord("%"))
    group = np.cumsum(first_of_line) - 1
    is_comment = comment_line[first_of_line][group]
    header = _fast_header(buf, line[comment_line], newlines)

    if _stray_cr(a):
        return None
    bad = np.flatnonzero(_BAD_DATA_LUT[a])
    if bad.size and not is_comment[np.searchsorted(starts, bad, side="right") - 1].all():
        return None
    data = ~is_comment
    starts, ends, line, first = starts[data], ends[data], line[data], first_of_line[data]
    heads = np.flatnonzero(first)
    ncols = np.diff(np.append(heads, starts.size))
    if heads.size and (ncols.min() < 2 or ncols.max() > 4):
        return None
    left = _fast_ids(a, starts[heads], ends[heads])
    right = _fast_ids(a, starts[heads + 1], ends[heads + 1])
    if left is None or right is None:
        return None
    return left, right, int(heads.size), header


def _stray_cr(a: np.ndarray) -> bool:
    cr = np.flatnonzero(a == 0x0D)
    if cr.size == 0:
        return False
    nxt = cr + 1
    at_end = nxt == a.size
    return bool((a[np.minimum(nxt, a.size - 1)][~at_end] != 0x0A).any())


def _fast_header(buf: bytes, comment_lines: np.ndarray, newlines: np.ndarray) -> str:
    if comment_lines.size == 0:
        return ""
    ln = int(comment_lines[0])
    start = int(newlines[ln - 1]) + 1 if ln else 0
    end = int(newlines[ln]) if ln < newlines.size else len(buf)
    return _decode_header(buf[start:end])


def _fast_ids(a: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
    lengths = ends - starts
    # Longer tokens (leading zeros, huge ids) are rare: let the scan judge them.
    if lengths.size and lengths.max() > _MAX_ID_DIGITS:
        return None
    value = np.zeros(starts.size, dtype=np.int64)
    for k in range(_MAX_ID_DIGITS):
        more = lengths > k
        if not more.any():
            break
        digit = a[starts[more] + k].astype(np.int64) - ord("0")
        if digit.min() < 0 or digit.max() > 9:
            return None
        value[more] = value[more] * 10 + digit
    if value.size and (value.min() < 1 or value.max() > MAX_ID):
        return None
    return value
