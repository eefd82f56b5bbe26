"""Take the edge list out of a KONECT ``download.tsv.<name>.tar.bz2``.

Nothing is extracted but the one ``out.*`` member, and its bytes go to a
path we choose, so member names never decide where data lands.  Archives
with unsafe entries (absolute paths, ``..``, links, devices) are refused
outright even so: a KONECT download never has them, and one that does is
not what we think it is.
"""

from __future__ import annotations

import tarfile
import zlib
from pathlib import Path, PurePosixPath

from mbebench.atomic import atomic_path

CHUNK = 1 << 20
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError)


class ArchiveError(ValueError):
    """An archive that is unreadable, unsafe or has no single edge list."""


def extract_edge_list(archive: Path, dest: Path, *, dataset: str) -> dict:
    """Write the archive's single ``out.*`` member to ``dest``; return {member, bytes}."""
    archive = Path(archive)
    where = f"dataset {dataset!r}: archive {archive}"
    tf, members = _open(archive, where)
    with tf:
        for m in members:
            _check_member(m, where)
        member = _edge_list_member(members, where)
        nbytes = _copy_member(tf, member, Path(dest), where)
    return {"member": member.name, "bytes": nbytes}


def _open(archive: Path, where: str) -> tuple[tarfile.TarFile, list[tarfile.TarInfo]]:
    try:
        tf = tarfile.open(archive, "r:bz2")
    except FileNotFoundError:
        raise ArchiveError(f"{where}: no such file") from None
    except _READ_ERRORS as e:
        raise ArchiveError(f"{where}: not a tar.bz2 archive ({_reason(e)})") from None
    try:
        # Listing decompresses the whole archive, so corruption anywhere shows here.
        return tf, tf.getmembers()
    except _READ_ERRORS as e:
        tf.close()
        raise ArchiveError(f"{where}: corrupt archive ({_reason(e)})") from None


def _reason(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _check_member(m: tarfile.TarInfo, where: str) -> None:
    name = m.name
    parts = PurePosixPath(name).parts
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"{where}: unsafe member {name!r} (absolute path)")
    if ".." in parts or ".." in name.split("\\"):
        raise ArchiveError(f"{where}: unsafe member {name!r} ('..' in path)")
    if m.issym() or m.islnk():
        raise ArchiveError(f"{where}: unsafe member {name!r} (link to {m.linkname!r})")
    if not (m.isreg() or m.isdir()):
        raise ArchiveError(f"{where}: unsafe member {name!r} (device, fifo or other special file)")


def _edge_list_member(members: list[tarfile.TarInfo], where: str) -> tarfile.TarInfo:
    found = [m for m in members if m.isreg() and PurePosixPath(m.name).name.startswith("out.")]
    if not found:
        names = ", ".join(m.name for m in members) or "nothing"
        raise ArchiveError(f"{where}: no out.* edge list member (has {names})")
    if len(found) > 1:
        names = ", ".join(m.name for m in found)
        raise ArchiveError(f"{where}: several out.* members, expected one: {names}")
    return found[0]


def _copy_member(tf: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, where: str) -> int:
    src = tf.extractfile(member)
    n = 0
    with atomic_path(dest) as tmp, open(tmp, "wb") as out:
        while chunk := _read(src, where):
            out.write(chunk)
            n += len(chunk)
        if n != member.size:
            raise ArchiveError(
                f"{where}: member {member.name!r} is {n} bytes, header says {member.size}"
            )
    return n


def _read(src, where: str) -> bytes:
    # Decompression errors surface here, mid-copy; tell them apart from write errors.
    try:
        return src.read(CHUNK)
    except _READ_ERRORS as e:
        raise ArchiveError(f"{where}: corrupt archive data ({_reason(e)})") from None

