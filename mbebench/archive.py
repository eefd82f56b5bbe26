"""Check KONECT ``download.tsv.<name>.tar.bz2`` archives and take their edge list out.

Nothing is extracted but the one ``out.*`` member, and its bytes go to a
path we choose, so member names never decide where data lands.  Archives
with unsafe entries (absolute paths, ``..``, links, devices) are refused
outright even so: a KONECT download never has them, and one that does is
not what we think it is.

Every input is read in bounded memory and disk: members larger than
``max_member_bytes`` are refused from their header, before their data is
decompressed or written; so are archives with more than ``MAX_MEMBERS``
entries and tar metadata blocks (GNU long names, pax headers), which tarfile
would otherwise read whole into memory, larger than ``MAX_READ`` bytes.
"""

from __future__ import annotations

import bz2
import tarfile
import zlib
from pathlib import Path, PurePosixPath

from mbebench.atomic import atomic_path

CHUNK = 1 << 20
# The largest KONECT edge lists (DBLP-author, 12 M edges) are a few hundred MB.
DEFAULT_MAX_MEMBER_BYTES = 16 << 30
# KONECT archives hold 2 to 5 members; a tar bomb of empty entries would
# otherwise grow tarfile's member list without bound.
MAX_MEMBERS = 10_000
MAX_READ = CHUNK
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError)


class ArchiveError(ValueError):
    """An archive that is unreadable, unsafe or has no single edge list.

    ``reason`` is the message without the "dataset ...: archive ...:" prefix;
    ``truncated`` is true when the data simply ends too early (a cut
    download), which another download may cure.
    """

    def __init__(self, message: str, *, reason: str = "", truncated: bool = False):
        super().__init__(message)
        self.reason = reason or message
        self.truncated = truncated


class _Bad(Exception):
    def __init__(self, reason: str, truncated: bool = False):
        super().__init__(reason)
        self.reason, self.truncated = reason, truncated


def check_archive(
    archive: Path, *, max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES
) -> tarfile.TarInfo:
    """Read the whole archive once; return its edge-list member or raise :class:`ArchiveError`.

    Verifies that it is bzip2 to the end of its stream (so a cut download is
    caught even when the tar part looks complete), a tar whose members are
    all safe, with exactly one ``out.*`` file of at most ``max_member_bytes``.
    The error's message is the bare reason (the caller knows what the file is).
    """
    try:
        tf, members = _open(Path(archive), max_member_bytes)
        with tf:
            member = _edge_list_member(members)
            _drain(tf)
        return member
    except _Bad as e:
        raise ArchiveError(e.reason, reason=e.reason, truncated=e.truncated) from None


def extract_edge_list(
    archive: Path, dest: Path, *, dataset: str, max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES
) -> dict:
    """Write the archive's single ``out.*`` member to ``dest``; return {member, bytes}."""
    archive = Path(archive)
    where = f"dataset {dataset!r}: archive {archive}"
    try:
        tf, members = _open(archive, max_member_bytes)
        with tf:
            member = _edge_list_member(members)
            nbytes = _copy_member(tf, member, Path(dest), where)
    except _Bad as e:
        raise ArchiveError(f"{where}: {e.reason}", reason=e.reason, truncated=e.truncated) from None
    return {"member": member.name, "bytes": nbytes}


class _BoundedReads:
    """The decompressed stream as tarfile sees it, refusing any single huge read.

    tarfile reads a GNU long name or pax header block in one call of the
    size its header claims; member data it reads in our CHUNK-sized pieces.
    """

    def __init__(self, f):
        self.f = f

    def read(self, n=-1):
        if n is None or n < 0 or n > MAX_READ:
            raise _Bad(f"a tar metadata block claims {n} bytes (oversized long name or pax header)")
        return self.f.read(n)

    def seek(self, *args):
        return self.f.seek(*args)

    def tell(self):
        return self.f.tell()


def _open(archive: Path, max_member_bytes: int):
    try:
        raw = bz2.BZ2File(archive)
    except FileNotFoundError:
        raise _Bad("no such file") from None
    except OSError as e:
        raise _Bad(f"cannot open ({e.strerror or e})") from None
    try:
        tf = tarfile.open(fileobj=_BoundedReads(raw), mode="r:")
    except _Bad:
        raw.close()
        raise
    except _READ_ERRORS as e:
        raw.close()
        if isinstance(e, EOFError):
            raise _Bad(f"truncated archive ({_reason(e)})", truncated=True) from None
        raise _Bad(f"not a tar.bz2 archive ({_reason(e)})") from None
    try:
        return tf, _members(tf, max_member_bytes)
    except BaseException:
        tf.close()
        raw.close()
        raise


def _members(tf: tarfile.TarFile, max_member_bytes: int) -> list[tarfile.TarInfo]:
    # One member at a time, so a hostile or oversized entry stops the listing
    # at its header, before its data is decompressed.
    members = []
    while True:
        try:
            m = tf.next()
        except _READ_ERRORS as e:
            raise _corrupt(e) from None
        if m is None:
            return members
        members.append(m)
        if len(members) > MAX_MEMBERS:
            raise _Bad(f"more than {MAX_MEMBERS} members (not a KONECT archive)")
        _check_member(m)
        if m.isreg() and m.size > max_member_bytes:
            raise _Bad(
                f"member {m.name!r} is {m.size} bytes, over the limit of {max_member_bytes}"
                " (konect.max_member_gib)"
            )


def _corrupt(e: Exception, what: str = "archive") -> _Bad:
    truncated = isinstance(e, EOFError) or "unexpected end of data" in str(e)
    return _Bad(f"{'truncated' if truncated else 'corrupt'} {what} ({_reason(e)})", truncated)


def _drain(tf: tarfile.TarFile) -> None:
    # tarfile stops at the end-of-archive block; the bzip2 stream's end
    # marker and checksum come after it, and only reading them proves the
    # file was not cut short.
    try:
        while tf.fileobj.read(CHUNK):
            pass
    except _READ_ERRORS as e:
        raise _corrupt(e) from None


def _reason(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _check_member(m: tarfile.TarInfo) -> None:
    name = m.name
    parts = PurePosixPath(name).parts
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise _Bad(f"unsafe member {name!r} (absolute path)")
    if ".." in parts or ".." in name.split("\\"):
        raise _Bad(f"unsafe member {name!r} ('..' in path)")
    if m.issym() or m.islnk():
        raise _Bad(f"unsafe member {name!r} (link to {m.linkname!r})")
    if not (m.isreg() or m.isdir()):
        raise _Bad(f"unsafe member {name!r} (device, fifo or other special file)")


def _edge_list_member(members: list[tarfile.TarInfo]) -> tarfile.TarInfo:
    found = [m for m in members if m.isreg() and PurePosixPath(m.name).name.startswith("out.")]
    if not found:
        names = ", ".join(m.name for m in members) or "nothing"
        raise _Bad(f"no out.* edge list member (has {names})")
    if len(found) > 1:
        names = ", ".join(m.name for m in found)
        raise _Bad(f"several out.* members, expected one: {names}")
    return found[0]


def _copy_member(tf: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, where: str) -> int:
    src = tf.extractfile(member)
    n = 0
    with atomic_path(dest) as tmp, open(tmp, "wb") as out:
        while chunk := _read(src):
            out.write(chunk)
            n += len(chunk)
        if n != member.size:
            raise _Bad(f"member {member.name!r} is {n} bytes, header says {member.size}")
        _drain(tf)
    return n


def _read(src) -> bytes:
    # Decompression errors surface here, mid-copy; tell them apart from write errors.
    try:
        return src.read(CHUNK)
    except _READ_ERRORS as e:
        raise _corrupt(e, "archive data") from None
