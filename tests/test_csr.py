"""mbebench.csr: round trip and every way a CSR file can be bad."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from mbebench import csr
from mbebench.csr import CSRError, from_edges, read_csr, write_csr

LEFT = [0, 0, 1, 2, 2, 2, 0]
RIGHT = [1, 3, 0, 1, 2, 3, 1]  # (0, 1) twice


def edge_set(g) -> set[tuple[int, int]]:
    left, right = g.edges()
    return set(zip(left.tolist(), right.tolist()))


@pytest.fixture
def good(tmp_path) -> Path:
    p = tmp_path / "g.csr"
    write_csr(from_edges(LEFT, RIGHT, 4, 5), p)
    return p


def test_round_trip(good):
    g = read_csr(good)
    assert (g.n_left, g.n_right, g.n_edges) == (4, 5, 6)
    assert edge_set(g) == set(zip(LEFT, RIGHT))
    assert g.neighbors_left(3).size == 0 and g.neighbors_right(4).size == 0
    for u in range(g.n_left):
        nb = g.neighbors_left(u).tolist()
        assert nb == sorted(set(nb))
    back = {(int(u), v) for v in range(g.n_right) for u in g.neighbors_right(v)}
    assert back == edge_set(g)
    assert g.path == str(good)


def test_empty_graph_round_trip(tmp_path):
    write_csr(from_edges([], [], 3, 2), tmp_path / "e.csr")
    g = read_csr(tmp_path / "e.csr")
    assert (g.n_left, g.n_right, g.n_edges) == (3, 2, 0)


def _patched(src: Path, dst: Path, offset: int, data: bytes, fix_crc: bool = False) -> Path:
    raw = bytearray(src.read_bytes())
    raw[offset : offset + len(data)] = data
    if fix_crc:
        raw[48:52] = struct.pack("<I", zlib.crc32(bytes(raw[64:])))
    dst.write_bytes(bytes(raw))
    return dst


def _expect(path: Path, fragment: str):
    with pytest.raises(CSRError) as exc:
        read_csr(path)
    assert str(path) in str(exc.value)
    assert fragment in str(exc.value)


def test_missing_file(tmp_path):
    _expect(tmp_path / "none.csr", "cannot open")


def test_shorter_than_header(tmp_path, good):
    p = tmp_path / "short.csr"
    p.write_bytes(good.read_bytes()[:20])
    _expect(p, "not an mbe-bench CSR file")


@pytest.mark.parametrize("keep", [-1, -8, 64 + 8])
def test_truncated(tmp_path, good, keep):
    p = tmp_path / "cut.csr"
    raw = good.read_bytes()
    p.write_bytes(raw[:keep])
    _expect(p, "truncated")


def test_trailing_garbage(tmp_path, good):
    p = tmp_path / "long.csr"
    p.write_bytes(good.read_bytes() + b"\x00" * 8)
    _expect(p, "header implies")


def test_wrong_magic(tmp_path, good):
    _expect(_patched(good, tmp_path / "m.csr", 0, b"NOTCSR\x00\x00"), "bad magic")


def test_npy_file_is_not_csr(tmp_path):
    p = tmp_path / "x.csr"
    np.save(p.with_suffix(".npy"), np.arange(100))
    p.with_suffix(".npy").rename(p)
    _expect(p, "bad magic")


def test_wrong_version(tmp_path, good):
    p = _patched(good, tmp_path / "v.csr", 8, struct.pack("<I", csr.FORMAT_VERSION + 1))
    _expect(p, "re-run the convert step")


def test_wrong_dtype(tmp_path, good):
    _expect(_patched(good, tmp_path / "d.csr", 40, b"<i4\x00"), "unsupported CSR header")


@pytest.mark.parametrize("where", ["offsets", "indices", "last byte"])
def test_checksum_flip(tmp_path, good, where):
    size = good.stat().st_size
    offset = {"offsets": 64 + 8, "indices": 64 + 5 * 8 + 1, "last byte": size - 1}[where]
    raw = good.read_bytes()
    p = _patched(good, tmp_path / "c.csr", offset, bytes([raw[offset] ^ 0x01]))
    _expect(p, "checksum mismatch")
    read_csr(p, verify=False)  # the cheap path trusts the bytes: documented trade-off


def test_offsets_inconsistent_even_with_valid_checksum(tmp_path, good):
    # left_offsets[0] := 1, checksum recomputed: only the structural check can catch it.
    p = _patched(good, tmp_path / "o.csr", 64, struct.pack("<q", 1), fix_crc=True)
    _expect(p, "offsets inconsistent")


def test_write_is_atomic_on_failure(tmp_path, good, monkeypatch):
    # Fail after the bytes are written but before the rename (as a full disk
    # or a kill would): the old file must survive and no temp file remain.
    before = good.read_bytes()

    def boom(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        write_csr(from_edges([0], [0], 1, 1), good)
    assert good.read_bytes() == before
    assert sorted(p.name for p in good.parent.iterdir()) == ["g.csr"]


def test_from_edges_validation():
    with pytest.raises(ValueError):
        from_edges([0, -1], [0, 0])
    with pytest.raises(ValueError):
        from_edges([0, 5], [0, 0], 3, 1)
    with pytest.raises(ValueError):
        from_edges([0], [0, 1])
    g = from_edges([1, 1, 0], [2, 2, 0])
    assert (g.n_left, g.n_right, g.n_edges) == (2, 3, 2)


@pytest.mark.parametrize("seed", range(6))
def test_from_sorted_edges_gives_the_same_file_as_from_edges(tmp_path, seed):
    # The converter's lean path: same bytes as the general builder on sorted, distinct edges.
    rng = np.random.default_rng(seed)
    n_left, n_right = int(rng.integers(1, 60)), int(rng.integers(1, 60))
    m = int(rng.integers(0, 400))
    key = np.unique(rng.integers(0, n_left, m) * n_right + rng.integers(0, n_right, m))
    left, right = (key // n_right).astype(np.int32), (key % n_right).astype(np.int32)
    write_csr(from_edges(left, right, n_left, n_right), tmp_path / "a.csr")
    write_csr(csr.from_sorted_edges(left, right, n_left, n_right), tmp_path / "b.csr")
    assert (tmp_path / "a.csr").read_bytes() == (tmp_path / "b.csr").read_bytes()


def test_file_layout_is_header_then_padded_arrays(good):
    # write_csr streams numpy's buffers: the bytes must still be exactly the documented layout.
    g = read_csr(good)
    parts = []
    for arr, dtype in ((g.left_offsets, "<i8"), (g.left_indices, "<i4"),
                       (g.right_offsets, "<i8"), (g.right_indices, "<i4")):
        data = np.asarray(arr, dtype=dtype).tobytes()
        parts.append(data + b"\0" * (-len(data) % 8))
    payload = b"".join(parts)
    header = struct.pack("<8sIIQQQ4s4sI12x", b"MBECSR\0\0", csr.FORMAT_VERSION, 64, 4, 5, 6,
                         b"<i8\0", b"<i4\0", zlib.crc32(payload))
    assert good.read_bytes() == header + payload
