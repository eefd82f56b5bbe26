"""Archive / edge list → CSR + meta, end to end."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from mbebench import csr
from mbebench.archive import ArchiveError
from mbebench.convert import ConvertError, convert
from mbebench.csr import read_csr
from mbebench.konect import KonectParseError

# Marvel-like ids (right side continues after the left), weights, a duplicate,
# comment lines and CRLF: the CSR must still hold exactly the distinct pairs.
EDGES = (
    b"% bip\tunweighted\r\n% 7 3 3\r\n1\t5\t1\r\n1\t6\t1\r\n2\t4\t2\r\n3\t6 1 17\r\n"
    b"% c\r\n3\t4\r\n1\t5\r\n3 5\r\n"
)


def reference_csr_edges(data: bytes) -> set[tuple[int, int]]:
    """Distinct pairs renumbered per side by sorted id, written independently of mbebench."""
    pairs = set()
    for line in data.decode().splitlines():
        cols = line.split()
        if cols and not cols[0].startswith("%"):
            pairs.add((int(cols[0]), int(cols[1])))
    lmap = {u: i for i, u in enumerate(sorted({u for u, _ in pairs}))}
    rmap = {v: i for i, v in enumerate(sorted({v for _, v in pairs}))}
    return {(lmap[u], rmap[v]) for u, v in pairs}


def csr_edges(path: Path) -> set[tuple[int, int]]:
    g = read_csr(path)
    left, right = g.edges()
    return set(zip(left.tolist(), right.tolist()))


def make_archive(path: Path, name: str, data: bytes) -> Path:
    with tarfile.open(path, "w:bz2") as tf:
        for member, body in ((f"{name}/meta.{name}", b"meta\n"), (f"{name}/out.{name}", data)):
            ti = tarfile.TarInfo(member)
            ti.size = len(body)
            tf.addfile(ti, io.BytesIO(body))
    return path


@pytest.fixture
def out(tmp_path):
    d = tmp_path / "results"
    return d / "toy.csr", d / "toy.json"


def files_in(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_archive_round_trip(tmp_path, out):
    arc = make_archive(tmp_path / "download.tsv.toy.tar.bz2", "toy", EDGES)
    meta = convert("Toy", out_csr=out[0], out_meta=out[1], archive=arc)
    assert csr_edges(out[0]) == reference_csr_edges(EDGES)
    on_disk = json.loads(out[1].read_text())
    assert on_disk == meta
    assert meta["dataset"] == "Toy"
    assert (meta["n_left"], meta["n_right"], meta["n_edges"]) == (3, 3, 6)
    assert (meta["n_lines"], meta["n_duplicates"]) == (7, 1)
    assert meta["header"] == "% bip\tunweighted"
    assert meta["source"] == "toy/out.toy"
    assert meta["source_sha256"] == hashlib.sha256(EDGES).hexdigest()
    assert meta["csr_format_version"] == csr.FORMAT_VERSION
    assert 0 <= meta["parse_s"] <= meta["convert_s"]
    assert files_in(out[0].parent) == ["toy.csr", "toy.json"]  # temp dir gone


def test_edge_file_round_trip(tmp_path, out):
    src = tmp_path / "out.toy"
    src.write_bytes(EDGES)
    meta = convert("Toy", out_csr=out[0], out_meta=out[1], edges=src)
    assert csr_edges(out[0]) == reference_csr_edges(EDGES)
    assert meta["source"] == "out.toy"
    g = read_csr(out[0])
    assert (g.n_left, g.n_right, g.n_edges) == (meta["n_left"], meta["n_right"], meta["n_edges"])


@pytest.mark.parametrize("kw", [{}, {"archive": "a", "edges": "b"}])
def test_exactly_one_source(out, kw):
    with pytest.raises(ConvertError, match="'Toy'.*exactly one"):
        convert("Toy", out_csr=out[0], out_meta=out[1], **kw)


def test_parse_error_leaves_nothing(tmp_path, out):
    arc = make_archive(tmp_path / "a.tar.bz2", "toy", b"1 2\n3 x\n")
    with pytest.raises(KonectParseError, match=r"'Toy'.*:2: "):
        convert("Toy", out_csr=out[0], out_meta=out[1], archive=arc)
    assert files_in(out[0].parent) == []


def test_archive_error_keeps_previous_outputs(tmp_path, out):
    arc = make_archive(tmp_path / "a.tar.bz2", "toy", EDGES)
    convert("Toy", out_csr=out[0], out_meta=out[1], archive=arc)
    before = out[0].read_bytes(), out[1].read_bytes()
    bad = tmp_path / "bad.tar.bz2"
    bad.write_bytes(arc.read_bytes()[:40])
    with pytest.raises(ArchiveError, match="'Toy'"):
        convert("Toy", out_csr=out[0], out_meta=out[1], archive=bad)
    assert (out[0].read_bytes(), out[1].read_bytes()) == before
    assert files_in(out[0].parent) == ["toy.csr", "toy.json"]


def test_meta_failure_removes_csr(tmp_path, out):
    src = tmp_path / "out.toy"
    src.write_bytes(EDGES)
    out[1].mkdir(parents=True)  # the meta path is taken by a folder: its write must fail
    with pytest.raises(OSError):
        convert("Toy", out_csr=out[0], out_meta=out[1], edges=src)
    assert not out[0].exists()


@pytest.mark.mirror
@pytest.mark.parametrize("name", ["marvel", "unicodelang", "movielens-10m_ui"])
def test_mirror_round_trip(konect_mirror, tmp_path, name):
    arc = konect_mirror / f"download.tsv.{name}.tar.bz2"
    with tarfile.open(arc, "r:bz2") as tf:
        (member,) = [m for m in tf.getmembers() if Path(m.name).name.startswith("out.")]
        data = tf.extractfile(member).read()
    meta = convert(name, out_csr=tmp_path / "g.csr", out_meta=tmp_path / "g.json", archive=arc)
    assert csr_edges(tmp_path / "g.csr") == reference_csr_edges(data)
    assert meta["source"] == member.name
    assert meta["source_sha256"] == hashlib.sha256(data).hexdigest()
