"""Archive / edge list → CSR + meta, end to end."""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from interrupting import files_in as _files_in
from interrupting import sigterm_once_started

from mbebench import csr
from mbebench.archive import ArchiveError
from mbebench.convert import ConvertError, convert
from mbebench.csr import read_csr
from mbebench.konect import KonectParseError

# convert may not have made the results folder at all
files_in = functools.partial(_files_in, missing_ok=True)

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


def test_bad_cached_download_says_how_to_get_rid_of_it(tmp_path, out):
    # An HTML page that an older version saved as the archive, with its sidecar.
    bad = tmp_path / "downloads" / "toy.tar.bz2"
    bad.parent.mkdir()
    bad.write_text("<html>portal</html>")
    (bad.parent / "toy.tar.bz2.sha256").write_text("x  toy.tar.bz2\n")
    with pytest.raises(ArchiveError) as exc:
        convert("Toy", out_csr=out[0], out_meta=out[1], archive=bad)
    msg = str(exc.value)
    assert msg.startswith(f"dataset 'Toy': archive {bad}: not a tar.bz2 archive")
    assert msg.endswith("; delete it and toy.tar.bz2.sha256 to download it again")
    (bad.parent / "toy.tar.bz2.sha256").unlink()  # not a download: no hint
    with pytest.raises(ArchiveError) as exc:
        convert("Toy", out_csr=out[0], out_meta=out[1], archive=bad)
    assert "delete" not in str(exc.value)


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


# ---------------------------------------------------------------------------
# Checksums, limits, non-bipartite files, and errors that name dataset and file.


def test_path_sha256_is_checked_before_parsing(tmp_path, out):
    src = tmp_path / "out.toy"
    src.write_bytes(EDGES)
    wrong = "0" * 64
    with pytest.raises(ConvertError) as exc:
        convert("Toy", out_csr=out[0], out_meta=out[1], edges=src, sha256=wrong)
    assert str(exc.value) == (f"dataset 'Toy': {src}: sha256 mismatch: expected {wrong},"
                              f" got {hashlib.sha256(EDGES).hexdigest()}")
    assert files_in(out[0].parent) == []
    right = hashlib.sha256(EDGES).hexdigest().upper()
    meta = convert("Toy", out_csr=out[0], out_meta=out[1], edges=src, sha256=right)
    assert meta["source_sha256"] == right.lower()


def test_archive_member_over_the_limit(tmp_path, out):
    arc = make_archive(tmp_path / "a.tar.bz2", "toy", EDGES)
    with pytest.raises(ArchiveError, match=f"over the limit of {len(EDGES) - 1}"):
        convert("Toy", out_csr=out[0], out_meta=out[1], archive=arc,
                max_member_bytes=len(EDGES) - 1)
    assert files_in(out[0].parent) == []


def test_non_bipartite_needs_the_flag(tmp_path, out):
    src = tmp_path / "out.toy"
    src.write_bytes(b"% sym unweighted\n1 2\n2 3\n")
    with pytest.raises(KonectParseError, match=r"'Toy'.*:1: header .* not bipartite"):
        convert("Toy", out_csr=out[0], out_meta=out[1], edges=src)
    assert files_in(out[0].parent) == []
    meta = convert("Toy", out_csr=out[0], out_meta=out[1], edges=src, allow_non_bipartite=True)
    assert (meta["n_left"], meta["n_right"], meta["n_edges"]) == (2, 2, 2)


def test_out_of_memory_building_the_csr_names_dataset_and_file(tmp_path, out, monkeypatch):
    def no_memory(*args):
        raise MemoryError("Unable to allocate 96.0 MiB for an array")

    monkeypatch.setattr(csr, "from_sorted_edges", no_memory)
    src = tmp_path / "out.toy"
    src.write_bytes(EDGES)
    with pytest.raises(MemoryError) as exc:
        convert("Toy", out_csr=out[0], out_meta=out[1], edges=src)
    assert str(exc.value) == (f"dataset 'Toy': out of memory while building the CSR for {out[0]}"
                              " (Unable to allocate 96.0 MiB for an array)")
    assert files_in(out[0].parent) == []


def _limit_file_size():
    # Writes past 64 KB fail with EFBIG, the way a full disk fails with ENOSPC.
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def _cli_convert(*args, **kw):
    return subprocess.run([sys.executable, "-m", "mbebench", "convert", *args],
                          check=False, capture_output=True, text=True, timeout=60, **kw)


@pytest.mark.parametrize("stage", ["extract", "csr"])
def test_write_error_names_dataset_and_file(tmp_path, stage):
    # extract: the edge list (140 KB) does not fit; csr: the edge list (53 KB) does, its CSR
    # (8 bytes per edge, 80 KB) does not.
    n_left = 20 if stage == "extract" else 9
    data = b"".join(f"{i} {j}\n".encode() for i in range(1, n_left + 1) for j in range(1, 1001))
    arc = make_archive(tmp_path / "a.tar.bz2", "toy", data)
    res = tmp_path / "results"
    r = _cli_convert("--dataset", "Toy", "--archive", str(arc), "--out-csr", str(res / "t.csr"),
                     "--out-meta", str(res / "t.json"), preexec_fn=_limit_file_size)
    assert r.returncode == 1
    line = r.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith("error: dataset 'Toy': ") and "File too large" in line
    if stage == "extract":
        assert f"extracting the edge list of {arc} into {res}/.t.csr." in line
    else:
        assert f"writing {res / 't.csr'} failed" in line
    assert files_in(res) == []


def test_leftovers_of_a_killed_convert_are_removed(tmp_path, out):
    res = out[0].parent
    (res / ".toy.csr.ab12cd34").mkdir(parents=True)
    (res / ".toy.csr.ab12cd34" / "edges").write_bytes(b"1 2\n" * 1000)
    for name in (".toy.csr.x1y2z3w4.tmp", ".toy.json.q9w8e7r6.tmp", ".other.csr.ab12cd34.tmp"):
        (res / name).write_bytes(b"x")
    src = tmp_path / "out.toy"
    src.write_bytes(EDGES)
    convert("Toy", out_csr=out[0], out_meta=out[1], edges=src)
    assert files_in(res) == [".other.csr.ab12cd34.tmp", "toy.csr", "toy.json"]


def test_sigterm_mid_convert_leaves_nothing(tmp_path):
    # The archive is a FIFO nobody writes to: convert blocks opening it, with
    # its temp folder already made, until the signal comes.
    fifo = tmp_path / "a.tar.bz2"
    os.mkfifo(fifo)
    res = tmp_path / "results"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mbebench", "convert", "--dataset", "Toy", "--archive", str(fifo),
         "--out-csr", str(res / "t.csr"), "--out-meta", str(res / "t.json")],
        stderr=subprocess.PIPE, text=True,
    )
    err = sigterm_once_started(
        proc, lambda: any(p.name.startswith(".t.csr.") for p in res.glob(".*")), "convert")
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip() == "error: dataset 'Toy': interrupted by SIGTERM"
    assert files_in(res) == []


# `python benchmarks/ingest/bench_ingest.py digests` before the chunked parser (commit 36c919c):
# the CSR files must stay the same, byte for byte.
MIRROR_CSR_SHA256 = {
    "brunson_corporate-leadership":
        "193769123f6a8c54946dcd3a40618340cf8471e7beb7e5d402b57a1714286781",
    "dbpedia-occupation": "cce637821fdcc8cfaf73aa0a67ffe5cb254b9cd5e283c26bcffcdbe3a79fa803",
    "dbpedia-producer": "174511d7ad3ace2575fcaccf3182f28fbae5468950f3a71eaecb00f6dc56b7b0",
    "dbpedia-recordlabel": "ceabbd3f5f11559260f64418e126ced4e4bfef42d8ab2eeb02e0bc8525ef4de5",
    "edit-bgwikisource": "402a684bf4b238a028b9b768d9358ab386b17638762f735e37fa7fe6311b4a2d",
    "edit-dvwiktionary": "2744effaece1d37e2275a674e9014a65db5fde2cf5c5550adf0ee0ff9f3abe92",
    "edit-ltwikisource": "3d3f702156b6d7816ec0cb763d4cd8c6dc295a372cf6bc30364433d646cebf30",
    "edit-mswikibooks": "38336c4df320f90d38da28b7387bc2911cff10fb2a5d892fc795f2cf01b9b744",
    "edit-nawiki": "751073bcb5bb497bca2f471f44fa7b4cc69b180abf3f6af13be4bb916685c0ff",
    "edit-sswiktionary": "3f36016f68a2fd0c7ed93606f1272dca902108b6c5e78a6e77d9e1b4b80036e2",
    "edit-tawikiquote": "c8d1b252a1b8e2fbf274846c5d2811c78bc12c8b5cd4e0fd89e05a8bf10b17c8",
    "marvel": "b4bc5b9731c9556e6a6b7e95d1a814017f445397af629f900e9f61af8941bf90",
    "moreno_crime": "76066d4c27e09ac7375940727c09d3a3e3984e110ddaa9f1d5c138b7f9fcbe71",
    "movielens-10m_ti": "5fb84afdfc4885cc87e1da5216f5bb73ccde54c395277ed6fa6fe23c83eb97f9",
    "movielens-10m_ui": "ca5493a945815b495550c0ee668151917c5d341bfc916b5a3f0d8f0933165d1d",
    "movielens-10m_ut": "a692c6f63fe0f12605beab926bb4b66c224d65edf88a105c5466b7c9006d49c5",
    "opsahl-collaboration": "9646375cf9bcf1f28cd04932e0b551c6728bcf19be0788ed68e4792c02208bbd",
    "opsahl-ucforum": "3f87c91813eb0e6bd60be603b0a7f37f9056e8c8eba54570c40a0b562d4bb532",
    "unicodelang": "867a81ea066b760015dcd531e2a1086ef1ea4389621b4629f08d765031ded0b4",
    "youtube-groupmemberships": "a30e2486e207171c6f2b296ecd3eb4138f3affb0be1b8a02a6efdacca22acea6",
}


@pytest.mark.mirror
def test_mirror_csr_files_are_byte_identical_to_before(konect_mirror, tmp_path):
    # Also: every mirror graph (the 8 paper datasets among them) still converts,
    # none is refused as non-bipartite, and each passes the download's archive check.
    from mbebench.archive import check_archive

    found = {}
    for arc in sorted(konect_mirror.glob("download.tsv.*.tar.bz2")):
        name = arc.name[len("download.tsv.") : -len(".tar.bz2")]
        check_archive(arc)
        convert(name, out_csr=tmp_path / "g.csr", out_meta=tmp_path / "g.json", archive=arc)
        found[name] = hashlib.sha256((tmp_path / "g.csr").read_bytes()).hexdigest()
    assert found == MIRROR_CSR_SHA256
