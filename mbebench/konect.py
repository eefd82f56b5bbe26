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

The first comment line is KONECT's format line: ``% sym`` and ``% asym``
files are not bipartite (one vertex set, both columns drawn from it), so
they are refused unless the caller passes ``allow_non_bipartite=True``; then
the two columns are read as the two sides like any other file.

The file is read in blocks of whole lines (``CHUNK_BYTES``), each parsed on
its own, so memory is a constant for the block plus a few bytes per edge
(int32 ids while reading; the ingest benchmark measures the peak).
Two implementations share the rules above: :func:`_fast` works on a block with
numpy and gives up (returns None) at the first sign of trouble; :func:`_scan`
is a plain line loop, run only on such a block, that either finds the first
bad line or, if the fast path was merely conservative, parses the block.
"""

from __future__ import annotations

import array
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mbebench.oneline import error_line

MAX_ID = 2**31 - 1
BOM = b"\xef\xbb\xbf"
CHUNK_BYTES = 1 << 21
# KONECT lines are under 100 bytes; a longer "line" is junk, and keeping it
# whole while looking for its end would make memory depend on the input.
MAX_LINE_BYTES = 1 << 20
NON_BIPARTITE = ("sym", "asym")
_BLANK = b" \t\r"
_NUMBER_CHARS = b"0123456789+-.eE"
_SPLIT = re.compile(rb"[ \t\r]+")


class KonectParseError(ValueError):
    """A KONECT edge list that cannot be read; the message names file and line."""


class KonectMemoryError(MemoryError):
    """Out of memory while parsing; the message names dataset and file."""


@dataclass(frozen=True)
class EdgeList:
    left: np.ndarray  # int32[n_edges], 0-based left ids, sorted by (left, right)
    right: np.ndarray  # int32[n_edges], 0-based right ids
    n_left: int
    n_right: int
    n_edges: int  # distinct (left, right) pairs
    n_lines: int  # data lines (edges before dropping duplicates)
    n_duplicates: int
    header: str
    left_ids: np.ndarray  # int64[n_left]: left_ids[i] is the file's id of left vertex i
    right_ids: np.ndarray  # int64[n_right]


def parse_edge_list(
    path: str | Path, *, dataset: str | None = None, allow_non_bipartite: bool = False
) -> EdgeList:
    path = Path(path)
    where = f"dataset {dataset!r}: {path}" if dataset else str(path)
    try:
        with open(path, "rb") as f:
            blocks = _Blocks(where, allow_non_bipartite)
            blocks.read(f)
        if blocks.n_lines == 0:
            raise KonectParseError(f"{where}: no edges")
        return _build(blocks)
    except OSError as e:
        raise KonectParseError(f"{where}: cannot read ({e.strerror or e})") from None
    except MemoryError as e:
        raise KonectMemoryError(f"{where}: out of memory while parsing ({error_line(e)})") from None


class _Blocks:
    """The file's edges as int32 arrays, one pair per block of whole lines."""

    def __init__(self, where: str, allow_non_bipartite: bool):
        self.where = where
        self.allow_non_bipartite = allow_non_bipartite
        self.left: list[np.ndarray] = []
        self.right: list[np.ndarray] = []
        self.n_lines = 0
        self.header: str | None = None
        self.lines_done = 0  # lines before the current block

    def read(self, f) -> None:
        data = f.read(max(CHUNK_BYTES, len(BOM)))
        more = bool(data)
        # Line numbers stay right: the BOM sits inside line 1.
        data = data.removeprefix(BOM)
        carry = b""
        while more:
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n") + 1
            carry = buf[cut:]
            if cut:
                self._parse(buf[:cut])
            del buf, data
            if len(carry) > MAX_LINE_BYTES:
                raise KonectParseError(
                    f"{self.where}:{self.lines_done + 1}: line longer than {MAX_LINE_BYTES} bytes"
                )
            data = f.read(CHUNK_BYTES)
            more = bool(data)
        if carry:
            self._parse(carry)

    def _parse(self, block: bytes) -> None:
        parsed = _fast(block)
        if parsed is None:
            parsed = _scan(block, self.where, self.lines_done)
        left, right, n, header, header_line = parsed
        if header is not None and self.header is None:
            self.header = header
            self._check_format(header, self.lines_done + header_line + 1)
        if n:
            self.left.append(left.astype(np.int32))
            self.right.append(right.astype(np.int32))
            self.n_lines += n
        self.lines_done += block.count(b"\n")

    def _check_format(self, header: str, lineno: int) -> None:
        words = header.lstrip("%").split()
        if words and words[0] in NON_BIPARTITE and not self.allow_non_bipartite:
            raise KonectParseError(
                f"{self.where}:{lineno}: header {header!r} says the graph is not bipartite"
                f" ({words[0]}); set allow_non_bipartite: true in its dataset entry to read"
                " the two columns as the two sides"
            )


def _take(chunks: list[np.ndarray]) -> np.ndarray:
    """One array from the blocks' arrays, which are dropped as soon as copied."""
    out = np.concatenate(chunks) if len(chunks) != 1 else chunks[0]
    chunks.clear()
    return out


def _renumber(orig: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct ids as int64, int32 index of each entry among them)."""
    top = int(orig.max())
    # KONECT ids are nearly dense: a lookup table beats sorting by ~5x;
    # sparse id spaces take the general route.
    if top <= 4 * orig.size + 1024:
        present = np.zeros(top + 1, dtype=bool)
        present[orig] = True
        rank = np.cumsum(present, dtype=np.int32)
        rank -= 1
        return np.flatnonzero(present), rank[orig]
    ids = np.unique(orig)
    return ids.astype(np.int64), np.searchsorted(ids, orig).astype(np.int32)


def _build(blocks: _Blocks) -> EdgeList:
    # Each side is renumbered while the other is still in blocks, and every
    # input array is dropped once used: peak memory stays near 16 bytes per
    # line plus the sort of the 8-byte (left, right) keys.
    left_ids, left = _renumber(_take(blocks.left))
    right_ids, right = _renumber(_take(blocks.right))
    n_right = len(right_ids)
    key = left.astype(np.int64)
    del left
    key *= n_right
    key += right
    del right
    key.sort()
    keep = np.empty(key.size, dtype=bool)
    keep[0] = True
    np.not_equal(key[1:], key[:-1], out=keep[1:])
    key = key[keep]
    del keep
    left = (key // n_right).astype(np.int32)
    right = (key % n_right).astype(np.int32)
    n_edges = len(key)
    return EdgeList(
        left=left,
        right=right,
        n_left=len(left_ids),
        n_right=n_right,
        n_edges=n_edges,
        n_lines=blocks.n_lines,
        n_duplicates=blocks.n_lines - n_edges,
        header=blocks.header or "",
        left_ids=left_ids.astype(np.int64, copy=False),
        right_ids=right_ids.astype(np.int64, copy=False),
    )


def _decode_header(raw: bytes) -> str:
    return raw.strip(_BLANK).decode("utf-8", errors="replace")


# ----------------------------------------------------------------------------
# Slow path: the reference semantics, one line at a time.


def _lines(buf: bytes):
    """buf.split(b"\\n") without the list of every line."""
    pos = 0
    while (end := buf.find(b"\n", pos)) >= 0:
        yield buf[pos:end]
        pos = end + 1
    yield buf[pos:]


def _scan(buf: bytes, where: str, lines_before: int = 0):
    lefts = array.array("q")
    rights = array.array("q")
    header = header_line = None
    for lineno, raw in enumerate(_lines(buf), start=lines_before + 1):
        line = raw.strip(_BLANK)
        if not line:
            continue
        if line.startswith(b"%"):
            if header is None:
                header, header_line = _decode_header(line), lineno - lines_before - 1
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
        np.frombuffer(lefts, dtype=np.int64),
        np.frombuffer(rights, dtype=np.int64),
        len(lefts),
        header,
        header_line,
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
            return f"{side} id {_show(tok)}: {reason}", None
        ids.append(value)
    for tok in cols[2:]:
        if tok.strip(_NUMBER_CHARS):
            return f"weight/timestamp column {_show(tok)} is not a number", None
    return None, (ids[0], ids[1])


def _show(tok: bytes) -> str:
    """A token for an error message, cut short: an error is one readable line."""
    text = tok.decode("ascii", errors="replace")
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}...({len(text)} characters)"


def _check_id(tok: bytes) -> tuple[str | None, int]:
    if tok.isdigit():
        # int() refuses more than 4300 digits with a message naming no line.
        digits = tok.lstrip(b"0") or b"0"
        if len(digits) > _MAX_ID_DIGITS:
            return "id too large (must be below 2**31)", 0
        value = int(digits)
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
    empty = np.empty(0, np.int64), np.empty(0, np.int64), 0, None, None
    if a.size == 0:
        return empty
    starts, ends, line, newlines = _tokens(a)
    if starts.size == 0:
        return empty
    first_of_line = np.concatenate(([True], line[1:] != line[:-1]))
    comment_line = first_of_line & (a[starts] == ord("%"))
    group = np.cumsum(first_of_line) - 1
    is_comment = comment_line[first_of_line][group]
    header, header_line = _fast_header(buf, line[comment_line], newlines)

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
    return left, right, int(heads.size), header, header_line


def _stray_cr(a: np.ndarray) -> bool:
    cr = np.flatnonzero(a == 0x0D)
    if cr.size == 0:
        return False
    nxt = cr + 1
    at_end = nxt == a.size
    return bool((a[np.minimum(nxt, a.size - 1)][~at_end] != 0x0A).any())


def _fast_header(buf: bytes, comment_lines: np.ndarray, newlines: np.ndarray):
    """(first comment line, its 0-based line index in buf), or (None, None)."""
    if comment_lines.size == 0:
        return None, None
    ln = int(comment_lines[0])
    start = int(newlines[ln - 1]) + 1 if ln else 0
    end = int(newlines[ln]) if ln < newlines.size else len(buf)
    return _decode_header(buf[start:end]), ln


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
