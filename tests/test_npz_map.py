"""mbebench.npz_map: the arrays of an np.savez file mapped from it, each member's CRC checked."""

from __future__ import annotations

import numpy as np

from mbebench import npz_map


def test_the_arrays_of_a_savez_file_are_mapped_and_equal(tmp_path):
    want = {"key": np.array("abc" * 20), "flag": np.array(True), "n": np.array(7),
            "offs": np.arange(11, dtype=np.int64), "adj": np.arange(40, dtype=np.int32) * 3,
            "pairs": np.arange(12, dtype=np.int32).reshape(6, 2), "empty": np.zeros(0)}
    path = tmp_path / "a.npz"
    np.savez(path, **want)
    got = npz_map.load(path)
    assert set(got) == set(want)
    for k, a in want.items():
        assert got[k].dtype == a.dtype and got[k].shape == a.shape and np.array_equal(got[k], a)
    assert isinstance(got["adj"], np.memmap) and got["adj"].flags.writeable
    got["adj"][0] = 99  # copy-on-write: the file keeps its bytes
    assert npz_map.load(path)["adj"][0] == 0
    assert str(got["key"][()]) == "abc" * 20


def test_a_corrupt_compressed_or_foreign_file_is_none(tmp_path):
    path = tmp_path / "a.npz"
    np.savez(path, a=np.arange(1000, dtype=np.int64))
    good = path.read_bytes()
    mid = len(good) // 2
    for bad in (good[:mid], good[:mid] + bytes([good[mid] ^ 1]) + good[mid + 1:], b"junk"):
        path.write_bytes(bad)
        assert npz_map.load(path) is None
    np.savez_compressed(path, a=np.arange(1000, dtype=np.int64))
    assert npz_map.load(path) is None  # a compressed member is not mapped
    np.savez(path, a=np.array([{"x": 1}], dtype=object), allow_pickle=True)
    assert npz_map.load(path) is None
    assert npz_map.load(tmp_path / "missing.npz") is None
