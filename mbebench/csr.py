"""The binary CSR file: one per dataset, both adjacency directions.

This is the only reader of graph files in the project; every engine loads its
graph through :func:`read_csr`.

Layout (little endian):

    header, 64 bytes:
        magic        8s   b"MBECSR\\x00\\x00"
        version      u32  FORMAT_VERSION
        header_size  u32  64
        n_left       u64
        n_right      u64
        n_edges      u64  distinct edges
        offset_dtype 4s   b"<i8\\x00"
        index_dtype  4s   b"<i4\\x00"
        checksum     u32  zlib.crc32 of everything after the header
        reserved     12x
    left_offsets   int64[n_left + 1]   neighbours of left vertex u are
    left_indices   int32[n_edges]      left_indices[left_offsets[u]:left_offsets[u+1]]
    right_offsets  int64[n_right + 1]
    right_indices  int32[n_edges]
    (each array starts at a multiple of 8 bytes; padding is zero)

Neighbour lists are sorted ascending and free of duplicates.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mbebench.atomic import atomic_path

MAGIC = b"MBECSR\x00\x00"
FORMAT_VERSION = 1
HEADER = struct.Struct("<8sIIQQQ4s4sI12x")
HEADER_SIZE = 64
assert HEADER.size == HEADER_SIZE
OFFSET_DTYPE = np.dtype("<i8")
INDEX_DTYPE = np.dtype("<i4")
MAX_VERTICES = 2**31 - 1


class CSRError(ValueError):
    """A CSR file is missing, truncated, foreign or corrupt."""


@dataclass(frozen=True)
class CSRGraph:
    """A bipartite graph: left vertices 0..n_left-1, right vertices 0..n_right-1."""

    n_left: int
    n_right: int
    n_edges: int
    left_offsets: np.ndarray  # int64[n_left + 1]
    left_indices: np.ndarray  # int32[n_edges], right ids
    right_offsets: np.ndarray  # int64[n_right + 1]
    right_indices: np.ndarray  # int32[n_edges], left ids
    # The file this graph was mapped from; engines that hand the graph to other
    # processes pass this path instead of pickling the arrays.
    path: str | None = None
    # False: read with verify=False, the payload's checksum not checked (:func:`verified`)
    verified: bool = True

    def neighbors_left(self, u: int) -> np.ndarray:
        return self.left_indices[self.left_offsets[u] : self.left_offsets[u + 1]]

    def neighbors_right(self, v: int) -> np.ndarray:
        return self.right_indices[self.right_offsets[v] : self.right_offsets[v + 1]]

    def swapped(self) -> CSRGraph:
        """The same graph with the sides exchanged (no copy)."""
        return CSRGraph(
            self.n_right,
            self.n_left,
            self.n_edges,
            self.right_offsets,
            self.right_indices,
            self.left_offsets,
            self.left_indices,
            verified=self.verified,
        )  # path dropped: the file holds the unswapped orientation

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(left ids, right ids) of every edge, sorted by left then right."""
        left = np.repeat(np.arange(self.n_left, dtype=np.int32), np.diff(self.left_offsets))
        return left, np.asarray(self.left_indices)


def _csr_one_side(src: np.ndarray, dst: np.ndarray, n_src: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((dst, src))
    counts = np.bincount(src, minlength=n_src)
    offsets = np.zeros(n_src + 1, dtype=OFFSET_DTYPE)
    np.cumsum(counts, out=offsets[1:])
    return offsets, dst[order].astype(INDEX_DTYPE, copy=False)


def from_edges(left, right, n_left: int | None = None, n_right: int | None = None) -> CSRGraph:
    """Build a graph from 0-based edge arrays; duplicate edges are dropped."""
    left = np.asarray(left, dtype=np.int64).ravel()
    right = np.asarray(right, dtype=np.int64).ravel()
    if left.shape != right.shape:
        raise ValueError("left and right edge arrays differ in length")
    if left.size and (left.min() < 0 or right.min() < 0):
        raise ValueError("vertex ids must be non-negative")
    n_left = int(left.max() + 1 if left.size else 0) if n_left is None else int(n_left)
    n_right = int(right.max() + 1 if right.size else 0) if n_right is None else int(n_right)
    if left.size and (left.max() >= n_left or right.max() >= n_right):
        raise ValueError("vertex id out of range for the given side sizes")
    if n_left > MAX_VERTICES or n_right > MAX_VERTICES:
        raise ValueError("too many vertices for int32 indices")
    if left.size:
        key = np.unique(left * max(n_right, 1) + right)
        left, right = key // max(n_right, 1), key % max(n_right, 1)
    lo, li = _csr_one_side(left, right, n_left)
    ro, ri = _csr_one_side(right, left, n_right)
    return CSRGraph(n_left, n_right, int(left.size), lo, li, ro, ri)


def _offsets(src: np.ndarray, n_src: int) -> np.ndarray:
    offsets = np.zeros(n_src + 1, dtype=OFFSET_DTYPE)
    np.cumsum(np.bincount(src, minlength=n_src), out=offsets[1:])
    return offsets


def from_sorted_edges(left, right, n_left: int, n_right: int) -> CSRGraph:
    """The graph of distinct edges already sorted by (left, right), as
    :func:`mbebench.konect.parse_edge_list` returns them.

    Same result as :func:`from_edges` for such input, in a fraction of its
    memory: the left side is the input as it stands (``right`` becomes
    ``left_indices`` without a copy when it is int32), and only the right
    side is sorted, as one array of 8-byte keys.  Unsorted or repeated edges
    give a wrong graph, not an error: callers guarantee the order.
    """
    left = np.asarray(left).ravel()
    right = np.asarray(right).ravel()
    if left.shape != right.shape:
        raise ValueError("left and right edge arrays differ in length")
    if n_left > MAX_VERTICES or n_right > MAX_VERTICES:
        raise ValueError("too many vertices for int32 indices")
    lo = _offsets(left, n_left)
    li = right.astype(INDEX_DTYPE, copy=False)
    ro = _offsets(right, n_right)
    key = right.astype(np.int64)
    key *= max(n_left, 1)
    key += left
    key.sort()
    key %= max(n_left, 1)
    ri = key.astype(INDEX_DTYPE)
    return CSRGraph(n_left, n_right, int(left.size), lo, li, ro, ri)


def _pad(n: int) -> int:
    return (-n) % 8


def _payload_parts(g: CSRGraph):
    # The arrays themselves (no byte copies): the CRC and the file write both
    # read numpy's buffer, so writing needs no memory beyond the graph.
    for arr, dtype in (
        (g.left_offsets, OFFSET_DTYPE),
        (g.left_indices, INDEX_DTYPE),
        (g.right_offsets, OFFSET_DTYPE),
        (g.right_indices, INDEX_DTYPE),
    ):
        data = np.ascontiguousarray(arr, dtype=dtype)
        yield data
        yield b"\x00" * _pad(data.nbytes)


def write_csr(g: CSRGraph, path: str | os.PathLike) -> None:
    """Write atomically: readers never see a half-written file."""
    parts = list(_payload_parts(g))
    crc = 0
    for p in parts:
        crc = zlib.crc32(p, crc)
    header = HEADER.pack(
        MAGIC,
        FORMAT_VERSION,
        HEADER_SIZE,
        g.n_left,
        g.n_right,
        g.n_edges,
        b"<i8\x00",
        b"<i4\x00",
        crc,
    )
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(header)
        for p in parts:
            f.write(p)


def _expected_size(n_left: int, n_right: int, n_edges: int) -> int:
    size = HEADER_SIZE
    for nbytes in (
        (n_left + 1) * 8,
        n_edges * 4,
        (n_right + 1) * 8,
        n_edges * 4,
    ):
        size += nbytes + _pad(nbytes)
    return size


def identity(path: str | os.PathLike) -> str | None:
    """Which graph a CSR file holds, from its header alone: sizes and payload checksum
    (``"<n_left>x<n_right>/<n_edges>/crc32:<hex>"``); None when it has no readable header.
    A shard row records it, so that a finished shard of another graph is never taken
    for one of this graph (``mbebench.gather``)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(HEADER_SIZE)
    except OSError:
        return None
    if len(raw) < HEADER_SIZE:
        return None
    magic, _version, _hsize, n_left, n_right, n_edges, _odt, _idt, crc = HEADER.unpack(raw)
    if magic != MAGIC:
        return None
    return f"{n_left}x{n_right}/{n_edges}/crc32:{crc:08x}"


def read_csr(path: str | os.PathLike, verify: bool = True) -> CSRGraph:
    """Memory-map a CSR file; raise :class:`CSRError` naming the file if it is bad."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        raise CSRError(f"{path}: cannot open CSR file ({e.strerror})") from None
    if path.is_dir():  # a directory has a size too
        raise CSRError(f"{path}: cannot open CSR file (is a directory)")
    if size < HEADER_SIZE:
        raise CSRError(f"{path}: not an mbe-bench CSR file (only {size} bytes)")
    try:
        with open(path, "rb") as f:
            raw = f.read(HEADER_SIZE)
    except OSError as e:
        raise CSRError(f"{path}: cannot open CSR file ({e.strerror})") from None
    magic, version, hsize, n_left, n_right, n_edges, odt, idt, crc = HEADER.unpack(raw)
    if magic != MAGIC:
        raise CSRError(f"{path}: not an mbe-bench CSR file (bad magic {magic!r})")
    if version != FORMAT_VERSION:
        raise CSRError(
            f"{path}: CSR format version {version}, this reader understands {FORMAT_VERSION};"
            " re-run the convert step"
        )
    if hsize != HEADER_SIZE or odt != b"<i8\x00" or idt != b"<i4\x00":
        raise CSRError(f"{path}: unsupported CSR header (size {hsize}, dtypes {odt!r}/{idt!r})")
    expected = _expected_size(n_left, n_right, n_edges)
    if size != expected:
        raise CSRError(f"{path}: CSR file is {size} bytes, header implies {expected} (truncated?)")
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    if verify and zlib.crc32(mm[HEADER_SIZE:]) != crc:
        raise CSRError(f"{path}: CSR checksum mismatch (file corrupt)")
    pos = HEADER_SIZE
    arrays = []
    for count, dtype in (
        (n_left + 1, OFFSET_DTYPE),
        (n_edges, INDEX_DTYPE),
        (n_right + 1, OFFSET_DTYPE),
        (n_edges, INDEX_DTYPE),
    ):
        nbytes = count * dtype.itemsize
        arrays.append(mm[pos : pos + nbytes].view(dtype))
        pos += nbytes + _pad(nbytes)
    lo, li, ro, ri = arrays
    if lo[0] != 0 or lo[-1] != n_edges or ro[0] != 0 or ro[-1] != n_edges:
        raise CSRError(f"{path}: CSR offsets inconsistent with edge count {n_edges}")
    return CSRGraph(int(n_left), int(n_right), int(n_edges), lo, li, ro, ri, str(path),
                    verified=verify)


def verified(g: CSRGraph) -> CSRGraph:
    """``g``, or, if :func:`read_csr` left its payload unchecked, its file read again with the
    check (:class:`CSRError` naming the file if it fails): the graph checked is the one used."""
    return g if g.verified else read_csr(g.path)
