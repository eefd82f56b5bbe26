"""Edge-list extraction from KONECT tar.bz2 archives, good and hostile."""

from __future__ import annotations

import bz2
import io
import tarfile
from pathlib import Path

import pytest

from mbebench import archive
from mbebench.archive import ArchiveError, check_archive, extract_edge_list

EDGES = b"% bip unweighted\n1 1\n1 2\n2 1\n"


def _info(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = ""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    ti.linkname = link
    return ti, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def make_archive(path: Path, members: list, mode: str = "w:bz2") -> Path:
    with tarfile.open(path, mode) as tf:
        for ti, fileobj in members:
            tf.addfile(ti, fileobj)
    return path


def good_members(name: str = "toy"):
    return [
        _info(name, kind=tarfile.DIRTYPE),
        _info(f"{name}/meta.{name}", b"name: toy\n"),
        _info(f"{name}/out.{name}", EDGES),
        _info(f"{name}/README.{name}", b"readme\n"),
    ]


@pytest.fixture
def good(tmp_path):
    return make_archive(tmp_path / "download.tsv.toy.tar.bz2", good_members())


def test_good_archive(tmp_path, good):
    dest = tmp_path / "edges" / "out.txt"
    info = extract_edge_list(good, dest, dataset="Toy")
    assert info == {"member": "toy/out.toy", "bytes": len(EDGES)}
    assert dest.read_bytes() == EDGES
    assert _leftovers(dest.parent) == ["out.txt"]


def test_out_member_with_other_name_in_subfolder(tmp_path):
    name = "brunson_corporate-leadership"
    member = f"{name}/out.{name}_corporate-leadership"
    arc = make_archive(tmp_path / f"download.tsv.{name}.tar.bz2", [
        _info(f"{name}/meta.{name}_corporate-leadership", b"x"),
        _info(member, EDGES),
    ])
    info = extract_edge_list(arc, tmp_path / "e", dataset="corporate-leadership")
    assert info["member"] == member
    assert (tmp_path / "e").read_bytes() == EDGES


def _expect_error(arc: Path, dest: Path, *fragments: str):
    with pytest.raises(ArchiveError) as exc:
        extract_edge_list(arc, dest, dataset="Toy")
    msg = str(exc.value)
    assert "\n" not in msg
    for f in ("'Toy'", str(arc), *fragments):
        assert f in msg, (f, msg)
    return msg


HOSTILE = {
    "parent-dir": ("../out.evil", tarfile.REGTYPE, "", "'..'"),
    "parent-dir-deep": ("toy/../../x", tarfile.REGTYPE, "", "'..'"),
    "absolute": ("/tmp/out.evil", tarfile.REGTYPE, "", "absolute"),
    "symlink": ("toy/link", tarfile.SYMTYPE, "/etc/passwd", "link"),
    "symlink-named-out": ("toy/out.link", tarfile.SYMTYPE, "../../etc/passwd", "link"),
    "hardlink": ("toy/hard", tarfile.LNKTYPE, "toy/out.toy", "link"),
    "char-device": ("toy/dev", tarfile.CHRTYPE, "", "device"),
    "fifo": ("toy/fifo", tarfile.FIFOTYPE, "", "fifo"),
}


@pytest.mark.parametrize("name,kind,link,reason", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_member_rejected(tmp_path, name, kind, link, reason):
    # The bad entry comes last: the whole member list must be checked, not just up to out.*.
    arc = make_archive(tmp_path / "a.tar.bz2", good_members() + [_info(name, kind=kind, link=link)])
    dest = tmp_path / "dest"
    _expect_error(arc, dest, repr(name), reason)
    assert not dest.exists()
    assert _leftovers(tmp_path) == ["a.tar.bz2"]


def test_no_out_member(tmp_path):
    members = [_info("toy/meta.toy", b"x"), _info("toy/outside", b"y")]
    arc = make_archive(tmp_path / "a.tar.bz2", members)
    _expect_error(arc, tmp_path / "d", "no out.*", "toy/outside")
    assert not (tmp_path / "d").exists()


def test_out_directory_is_no_edge_list(tmp_path):
    arc = make_archive(tmp_path / "a.tar.bz2", [_info("toy/out.toy", kind=tarfile.DIRTYPE)])
    _expect_error(arc, tmp_path / "d", "no out.*")


def test_two_out_members(tmp_path):
    arc = make_archive(tmp_path / "a.tar.bz2", good_members() + [_info("toy/out.toy_2", EDGES)])
    _expect_error(arc, tmp_path / "d", "several", "toy/out.toy", "toy/out.toy_2")
    assert not (tmp_path / "d").exists()


def test_not_bzip2(tmp_path):
    plain = tmp_path / "a.tar.bz2"
    plain.write_text("<html>502 Bad Gateway</html>\n")
    _expect_error(plain, tmp_path / "d", "not a tar.bz2")


def test_gzip_tar_is_not_bzip2(tmp_path):
    arc = make_archive(tmp_path / "a.tar.bz2", good_members(), mode="w:gz")
    _expect_error(arc, tmp_path / "d", "not a tar.bz2")


def test_bzip2_but_not_tar(tmp_path):
    arc = tmp_path / "a.tar.bz2"
    arc.write_bytes(bz2.compress(EDGES * 100))
    _expect_error(arc, tmp_path / "d")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncated_archive(tmp_path, good, cut):
    data = good.read_bytes()
    bad = tmp_path / "cut.tar.bz2"
    bad.write_bytes(data[: int(len(data) * cut)])
    _expect_error(bad, tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_corrupt_bytes(tmp_path):
    # Big enough that the flipped bytes land in compressed data, not the header.
    big = b"".join(f"{i % 997 + 1} {i * 7 % 991 + 1}\n".encode() for i in range(20000))
    arc = make_archive(tmp_path / "a.tar.bz2", [_info("toy/out.toy", big)])
    data = bytearray(arc.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 16] = bytes(b ^ 0xFF for b in data[mid : mid + 16])
    bad = tmp_path / "bad.tar.bz2"
    bad.write_bytes(bytes(data))
    dest = tmp_path / "d"
    dest.write_bytes(b"previous good file")
    _expect_error(bad, dest)
    assert dest.read_bytes() == b"previous good file"
    assert sorted(_leftovers(tmp_path)) == ["a.tar.bz2", "bad.tar.bz2", "d"]


def test_missing_archive(tmp_path):
    _expect_error(tmp_path / "nope.tar.bz2", tmp_path / "d", "no such file")


@pytest.mark.mirror
def test_every_mirror_archive_has_one_edge_list(konect_mirror, tmp_path):
    for arc in sorted(konect_mirror.glob("download.tsv.*.tar.bz2")):
        name = arc.name[len("download.tsv.") : -len(".tar.bz2")]
        info = extract_edge_list(arc, tmp_path / name, dataset=name)
        assert info["member"].startswith(f"{name}/out.")
        with tarfile.open(arc, "r:bz2") as tf:
            assert tf.extractfile(info["member"]).read() == (tmp_path / name).read_bytes()


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ---------------------------------------------------------------------------
# Bounded memory and disk on any archive.


def test_member_over_the_limit_is_refused_from_its_header(tmp_path):
    # The header claims 1 TiB and no data follows: a listing that read (or
    # seeked over) the data before checking the size would not stop here.
    arc = tmp_path / "a.tar.bz2"
    with tarfile.open(arc, "w:bz2") as tf:
        ti = tarfile.TarInfo("toy/out.toy")
        ti.size = 2**40
        tf.addfile(ti)
    dest = tmp_path / "d"
    with pytest.raises(ArchiveError) as exc:
        extract_edge_list(arc, dest, dataset="Toy", max_member_bytes=16 << 30)
    assert f"member 'toy/out.toy' is {2**40} bytes, over the limit of {16 << 30}" in str(exc.value)
    assert "'Toy'" in str(exc.value) and not exc.value.truncated
    assert not dest.exists()


def test_bzip2_bomb_is_refused_before_extraction(tmp_path):
    # 8 MiB of zeros compress to a few hundred bytes.
    arc = make_archive(tmp_path / "a.tar.bz2", [_info("toy/out.toy", bytes(8 << 20))])
    assert arc.stat().st_size < 2000
    with pytest.raises(ArchiveError, match="over the limit of 1048576"):
        extract_edge_list(arc, tmp_path / "d", dataset="Toy", max_member_bytes=1 << 20)
    assert _leftovers(tmp_path) == ["a.tar.bz2"]
    assert extract_edge_list(arc, tmp_path / "d", dataset="Toy")["bytes"] == 8 << 20


def test_any_oversized_member_is_refused(tmp_path):
    # Listing decompresses every member: a huge README costs as much as a huge edge list.
    members = good_members() + [_info("toy/README.big", bytes(4096))]
    arc = make_archive(tmp_path / "a.tar.bz2", members)
    with pytest.raises(ArchiveError, match="'toy/README.big' is 4096 bytes, over the limit"):
        extract_edge_list(arc, tmp_path / "d", dataset="Toy", max_member_bytes=1000)


def test_oversized_long_name_is_refused(tmp_path):
    # tarfile reads a GNU long-name block whole, however large its header says it is.
    members = [_info("toy/" + "n" * (2 << 20)), *good_members()]
    arc = make_archive(tmp_path / "a.tar.bz2", members, mode="w:bz2")
    _expect_error(arc, tmp_path / "d", "metadata block claims")


def test_too_many_members_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBERS", 20)
    members = good_members() + [_info(f"toy/empty{i}") for i in range(30)]
    arc = make_archive(tmp_path / "a.tar.bz2", members)
    _expect_error(arc, tmp_path / "d", "more than 20 members")


def test_cut_in_the_last_bytes_is_truncated(tmp_path, good):
    # The tar part is complete; only the bzip2 end marker is missing.
    bad = tmp_path / "cut.tar.bz2"
    bad.write_bytes(good.read_bytes()[:-2])
    dest = tmp_path / "d"
    msg = _expect_error(bad, dest, "truncated archive")
    assert "not a bzip2" not in msg
    assert not dest.exists()
    with pytest.raises(ArchiveError) as exc:
        check_archive(bad)
    assert exc.value.truncated and str(exc.value).startswith("truncated archive")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncation_is_named_as_such(tmp_path, cut):
    # Formerly "not a tar.bz2 archive (not a bzip2 file)" for a cut download.
    big = b"".join(f"{i % 997 + 1} {i * 7 % 991 + 1}\n".encode() for i in range(50000))
    arc = make_archive(tmp_path / "a.tar.bz2", [_info("toy/out.toy", big)])
    bad = tmp_path / "cut.tar.bz2"
    bad.write_bytes(arc.read_bytes()[: int(arc.stat().st_size * cut)])
    msg = _expect_error(bad, tmp_path / "d", "truncated archive")
    assert "not a" not in msg


def test_check_archive_returns_the_edge_list_member(good):
    assert check_archive(good).name == "toy/out.toy"


def test_check_archive_reason_has_no_prefix(tmp_path):
    html = tmp_path / "a.tar.bz2"
    html.write_text("<html>login</html>")
    with pytest.raises(ArchiveError) as exc:
        check_archive(html)
    assert str(exc.value) == exc.value.reason
    assert exc.value.reason.startswith("not a tar.bz2 archive") and not exc.value.truncated
