"""The arrays of an ``np.savez`` file, mapped from it instead of read: each one a
copy-on-write view of the file's bytes, after its member's CRC-32 was checked as ``zipfile``
checks it.  ``np.load`` copies every array out of the zip member in chunks: 0.34 s for the
146 MB preparation of an 11 M-edge graph, against 0.05 s mapped (2-core VM, file cached).

    arrays = load(path)   # {name: array} or None: not an uncompressed .npz, or corrupt
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_THREADS = 8
_LOCAL = struct.Struct("<4s22xHH")  # a zip member's local header: signature ... name, extra


def load(path) -> dict | None:
    """{name: array} of the ``np.savez`` file ``path`` (every member stored, a C-order .npy
    of a plain dtype), or None when it is not one or a member's CRC or size disagrees."""
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
        mm = np.memmap(path, np.uint8, mode="c")  # private: writes stay in this process
    except (OSError, ValueError, zipfile.BadZipFile):
        return None
    members = []
    for info in infos:
        if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
            return None
        head = bytes(mm[info.header_offset:info.header_offset + _LOCAL.size])
        if len(head) != _LOCAL.size:
            return None
        sig, n_name, n_extra = _LOCAL.unpack(head)
        start = info.header_offset + _LOCAL.size + n_name + n_extra
        data = mm[start:start + info.file_size]
        if sig != b"PK\x03\x04" or data.size != info.file_size:
            return None
        members.append((info, data))
    # zlib.crc32 releases the GIL: the members' checks (and the page faults of reading them
    # in) run side by side
    with ThreadPoolExecutor(max(1, min(_THREADS, len(members)))) as pool:
        crcs = list(pool.map(lambda m: zlib.crc32(m[1]), members))
    out = {}
    for (info, data), crc in zip(members, crcs):
        arr = _npy(data) if crc == info.CRC else None
        if arr is None:
            return None
        out[info.filename[:-4]] = arr
    return out


def _npy(data: np.ndarray) -> np.ndarray | None:
    """The array a .npy file's bytes ``data`` hold, as a view of them."""
    try:
        fp = io.BytesIO(bytes(data[:min(data.size, 1 << 16)]))
        version = np.lib.format.read_magic(fp)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read(fp)
    except (ValueError, OSError):
        return None
    body = data[fp.tell():]
    if fortran or dtype.hasobject or body.size != int(np.prod(shape)) * dtype.itemsize:
        return None
    return body.view(dtype).reshape(shape)
