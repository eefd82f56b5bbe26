"""KONECT edge-list parser: malformed input, accepted variants, real files.

Expected values never come from the parser itself: they are written out by
hand, computed by the small reference parser below, or read from the
workspace's independent descriptions of the data (datasets.md, SOURCES.md).
"""

from __future__ import annotations

import re
import tarfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbebench import konect
from mbebench.konect import KonectParseError, parse_edge_list

# ---------------------------------------------------------------------------
# An independent statement of the format, line by line, for comparisons.

_ID = re.compile(r"[0-9]+")
_EXTRA = re.compile(r"[0-9+\-.eE]+")


def reference_parse(data: bytes):
    """(set of (left, right) original-id pairs, data lines) or (None, bad line number)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    edges, n = set(), 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            text = None
        stripped = raw.strip(b" \t\r")
        if not stripped or stripped.startswith(b"%"):
            continue
        if text is None or "\r" in text or any(c < " " and c != "\t" or c == "\x7f" for c in text):
            return None, number
        cols = [c for c in re.split(r"[ \t]+", text) if c]
        ok = (
            2 <= len(cols) <= 4
            and all(_ID.fullmatch(c) and 1 <= int(c) < 2**31 for c in cols[:2])
            and all(_EXTRA.fullmatch(c) for c in cols[2:])
        )
        if not ok:
            return None, number
        edges.add((int(cols[0]), int(cols[1])))
        n += 1
    return edges, n


def edge_set(el) -> set[tuple[int, int]]:
    return set(zip(el.left_ids[el.left].tolist(), el.right_ids[el.right].tolist()))


def write(tmp_path: Path, data: bytes | str, name: str = "out.test") -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


# ---------------------------------------------------------------------------
# Malformed files: (content, line number that must be reported)

MALFORMED = {
    "letters-left": ("% bip unweighted\n1 2\nabc 3\n", 3),
    "letters-right": ("1 2\n3 x\n", 2),
    "one-column": ("% bip unweighted\n% 3 2 2\n1 2\n5\n", 4),
    "one-column-blank-padded": ("1 2\n 3\t\n", 2),
    "five-columns": ("1 2 3 4 5\n", 1),
    "five-columns-tabs": ("1\t2\n3\t4\t1\t5\t6\n", 2),
    "zero-left": ("1 2\n0 1\n", 2),
    "zero-right": ("1 2\n2 0\n", 2),
    "negative": ("1 -2\n", 1),
    "too-large": ("1 2\n2147483648 1\n", 2),
    "huge": ("1 2\n99999999999999999999 1\n", 2),
    "float-id": ("1 1.5\n", 1),
    "exponent-id": ("1 2\n1e3 4\n", 2),
    "hex-id": ("1 2\n0x1F 2\n", 2),
    "plus-sign": ("1 2\n+3 4\n", 2),
    "binary": (b"1 2\n\x00\x01\x02\xff 3\n", 2),
    "non-ascii-weight": (b"1 2\n3 4 \xc3\xa9\n", 2),
    "text-weight": ("1 2\n3 4 abc\n", 2),
    "comma-separated": ("1 2 1\n3,4\n", 2),
    "semicolon": ("1;2\n", 1),
    "blank-lines-counted": ("\n\n1 2\n\n x y\n", 5),
    "crlf-bad-line": ("% bip\r\n1 2\r\n3 q\r\n", 3),
    "bom-bad-line": ("\ufeff% bip\n1 a\n", 2),
    "hash-is-no-comment": ("1 2\n1 2 # note\n", 2),
    "vertical-tab": ("1\x0b2\n", 1),
    "lone-cr-glues-lines": ("1 2\n3 4\r5 6\n", 2),
    "comment-after-data": ("% bip unweighted\n1 2\n% fine\n7 8\n9\n", 5),
    "late-error-in-big-file": ("".join(f"{i} {i}\n" for i in range(1, 5001)) + "5 five\n", 5001),
}


@pytest.mark.parametrize("content,line", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_line_reported(tmp_path, content, line):
    p = write(tmp_path, content)
    # The reference must agree that this line is the first bad one, or the case is wrong.
    assert reference_parse(p.read_bytes()) == (None, line)
    with pytest.raises(KonectParseError) as exc:
        parse_edge_list(p, dataset="Toy")
    msg = str(exc.value)
    assert f"{p}:{line}: " in msg
    assert "Toy" in msg
    assert "\n" not in msg


@pytest.mark.parametrize(
    "content", ["", "% bip unweighted\n", "% bip unweighted\n% 0 0 0\n", "\n \n\t\n", "\ufeff"]
)
def test_no_edges(tmp_path, content):
    p = write(tmp_path, content)
    with pytest.raises(KonectParseError, match=re.escape(f"{p}: no edges")):
        parse_edge_list(p)


def test_missing_file(tmp_path):
    with pytest.raises(KonectParseError, match="cannot read"):
        parse_edge_list(tmp_path / "out.none")


# ---------------------------------------------------------------------------
# Accepted variants (documented in mbebench/konect.py): they give the right graph.

TRIANGLE = {(1, 1), (1, 2), (2, 2), (3, 1)}

ACCEPTED = {
    "plain": "1 1\n1 2\n2 2\n3 1\n",
    "bip-unweighted-space": "% bip unweighted\n1 1\n1 2\n2 2\n3 1\n",
    "bip-unweighted-tab": "% bip\tunweighted\n1\t1\n1\t2\n2\t2\n3\t1\n",
    "posweighted-extra-token": "% bip\tposweighted\t2\n1\t1\t1\n1\t2\t0.018\n2\t2\t0\n3\t1\t7.5\n",
    "positive-with-size-line": "% bip positive\n% 4 3 2\n1\t1\t1 1215184630\n1\t2\t1 1\n"
    "2\t2\t1 5\n3\t1\t1 9\n",
    "negative-and-float-weights": "1 1 -1\n1 2 -0.5\n2 2 1e-3\n3 1 +2\n",
    "trailing-spaces": "% bip unweighted\n% 4 3 2\n1 1 \n1 2 \n2 2\t\n3 1  \n",
    "crlf": "% bip unweighted\r\n1 1\r\n1 2\r\n2 2\r\n3 1\r\n",
    "bom": "\ufeff% bip unweighted\n1 1\n1 2\n2 2\n3 1\n",
    "bom-no-header": "\ufeff1 1\n1 2\n2 2\n3 1\n",
    "comments-everywhere": "% bip unweighted\n% one\n1 1\n%two\n1 2\n   % indented\n2 2\n"
    "% ünïcode comment \xe9\n3 1\n% last",
    "blank-lines": "\n1 1\n\n1 2\n \t \n2 2\n3 1\n\n\n",
    "no-final-newline": "1 1\n1 2\n2 2\n3 1",
    "leading-blanks": "  1 1\n\t1 2\n 2  2\n3 \t 1\n",
    "duplicates": "1 1\n1 2\n1 1\n2 2\n3 1\n1 2 5\n",
    "leading-zeros": "01 001\n1 2\n2 02\n3 1\n",
}


@pytest.mark.parametrize("content", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted_variants(tmp_path, content):
    p = write(tmp_path, content)
    el = parse_edge_list(p)
    assert edge_set(el) == TRIANGLE
    expected, n_lines = reference_parse(p.read_bytes())
    assert expected == TRIANGLE
    assert (el.n_edges, el.n_lines, el.n_duplicates) == (4, n_lines, n_lines - 4)
    assert (el.n_left, el.n_right) == (3, 2)


def test_header_is_first_comment_line(tmp_path):
    el = parse_edge_list(write(tmp_path, "\ufeff% bip\tposweighted\t2\r\n% 4 3 2\r\n1 1 1\r\n"))
    assert el.header == "% bip\tposweighted\t2"
    assert parse_edge_list(write(tmp_path, "1 1\n")).header == ""


def test_shared_id_space_is_renumbered_per_side(tmp_path):
    # Marvel-style: left ids 1..3, right ids continue at 4..6 with a gap at 5.
    el = parse_edge_list(write(tmp_path, "% bip\tunweighted\n1\t4\n2\t6\n3\t4\n3\t6\n"))
    assert (el.n_left, el.n_right, el.n_edges) == (3, 2, 4)
    assert el.left_ids.tolist() == [1, 2, 3]
    assert el.right_ids.tolist() == [4, 6]
    pairs = set(zip(el.left.tolist(), el.right.tolist()))
    assert pairs == {(0, 0), (1, 1), (2, 0), (2, 1)}


def test_sparse_ids_take_the_general_route(tmp_path):
    el = parse_edge_list(write(tmp_path, "2147483647 1\n5 1000000000\n5 1\n"))
    assert el.left_ids.tolist() == [5, 2147483647]
    assert el.right_ids.tolist() == [1, 1000000000]
    assert edge_set(el) == {(2147483647, 1), (5, 1000000000), (5, 1)}


def test_output_arrays_sorted_and_typed(tmp_path):
    el = parse_edge_list(write(tmp_path, "3 1\n1 2\n1 1\n2 2\n3 1\n"))
    # int32 (ids are below 2**31) halves the memory of the arrays handed to the CSR writer.
    assert el.left.dtype == el.right.dtype == np.int32
    assert el.left_ids.dtype == el.right_ids.dtype == np.int64
    order = np.lexsort((el.right, el.left))
    assert (order == np.arange(el.n_edges)).all()
    assert el.n_duplicates == 1


# ---------------------------------------------------------------------------
# Random edge lists in random KONECT styles.

# tmp_path is shared by the examples of one test; each example overwrites the same file.
PROPERTY = {"deadline": None, "suppress_health_check": [HealthCheck.function_scoped_fixture]}
SEPARATORS = [" ", "\t", "  ", " \t", "\t "]
HEADERS = ["", "% bip unweighted\n", "% bip\tunweighted\n", "% bip positive\n",
           "% bip\tposweighted\t2\n"]


@st.composite
def konect_files(draw):
    edges = draw(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 40)), min_size=1,
                          max_size=60))
    offset = draw(st.sampled_from([0, 0, 40, 2**31 - 41]))  # shared id space / huge ids
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    lines = [draw(st.sampled_from(HEADERS)).rstrip("\n")]
    if draw(st.booleans()):
        lines.append(f"% {len(edges)} 40 40")
    for u, v in edges:
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "% c", "  ", "%"])))
        cols = [str(u), str(v + offset)]
        extra = draw(st.integers(0, 2))
        if extra:
            cols.append(draw(st.sampled_from(["1", "0.5", "-2", "3e-2", "0"])))
        if extra == 2:
            cols.append(str(draw(st.integers(0, 2**32))))
        text = ""
        for c in cols:
            text += (draw(st.sampled_from(SEPARATORS)) if text else "") + c
        lines.append(text + draw(st.sampled_from(["", " ", "\t"])))
    body = eol.join(lines) + draw(st.sampled_from(["", eol]))
    bom = "\ufeff" if draw(st.integers(0, 4)) == 0 else ""
    return (bom + body).encode()


@settings(max_examples=150, **PROPERTY)
@given(data=konect_files())
def test_random_styles_match_reference(tmp_path, data):
    p = write(tmp_path, data)
    expected, n_lines = reference_parse(data)
    el = parse_edge_list(p)
    assert edge_set(el) == expected
    assert el.n_lines == n_lines and el.n_edges == len(expected)


# Lines mixing good and bad tokens: the fast path must agree with the line
# scan (and both with the reference) on acceptance, graph and error line.
TOKENS = ["1", "2", "17", "0", "-3", "1.5", "x", "2147483648", "%", "%c", "1e3", "0.5", "+4"]
GAPS = [" ", "\t", "  ", "\r", ""]


@st.composite
def messy_files(draw):
    lines = []
    for _ in range(draw(st.integers(1, 8))):
        toks = draw(st.lists(st.sampled_from(TOKENS), min_size=0, max_size=5))
        gap = draw(st.sampled_from(GAPS[:4]))
        lines.append(gap.join(toks) + draw(st.sampled_from(GAPS)))
    return "\n".join(lines).encode()


@settings(max_examples=300, **PROPERTY)
@given(data=messy_files())
def test_messy_files_fast_and_slow_agree(tmp_path, data):
    p = write(tmp_path, data)
    expected, info = reference_parse(data)
    fast = konect._fast(data)
    if expected is None:
        assert fast is None
        with pytest.raises(KonectParseError, match=rf"{re.escape(str(p))}:{info}: "):
            parse_edge_list(p)
    elif info == 0:
        with pytest.raises(KonectParseError, match="no edges"):
            parse_edge_list(p)
    else:
        el = parse_edge_list(p)
        assert edge_set(el) == expected and el.n_lines == info
        if fast is not None:
            assert set(zip(fast[0].tolist(), fast[1].tolist())) == expected


def _count_line_scans(monkeypatch) -> list[int]:
    """Blocks handed to the per-line Python scan (seconds per 200k lines; numpy ~0.1 s):
    a count of work instead of a wall clock, which a busy machine stretches."""
    scans = []
    scan = konect._scan

    def counted(buf, *args, **kw):
        scans.append(len(buf))
        return scan(buf, *args, **kw)

    monkeypatch.setattr(konect, "_scan", counted)
    return scans


def test_fast_path_is_vectorised(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    u, v = rng.integers(1, 50_000, 200_000), rng.integers(1, 20_000, 200_000)
    p = write(tmp_path, "% bip unweighted\n" + "".join(f"{a}\t{b}\n" for a, b in zip(u, v)))
    assert konect._fast(p.read_bytes()) is not None
    scans = _count_line_scans(monkeypatch)
    el = parse_edge_list(p)
    assert scans == []
    assert el.n_edges == len(set(zip(u.tolist(), v.tolist())))
    # the counter sees the slow path when a block needs it
    write(tmp_path, "% bip unweighted\n1 2\n3 x\n", name="bad")
    with pytest.raises(KonectParseError):
        parse_edge_list(tmp_path / "bad")
    assert len(scans) == 1


# ---------------------------------------------------------------------------
# The real KONECT files in the workspace mirror.


def _md_int(s: str) -> int:
    return int(s.replace(",", "").strip())


def paper_sizes(shared: Path) -> dict[str, tuple[int, int, int]]:
    """KONECT name → (|U|, |V|, |E|) from the paper's table in datasets.md."""
    sizes = {}
    for line in (shared / "datasets.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.fullmatch(r"[\d,]+", cells[2]):
            sizes[cells[1]] = (_md_int(cells[2]), _md_int(cells[3]), _md_int(cells[4]))
    return sizes


def measured_stats(shared: Path) -> dict[str, tuple[int, int, int, int]]:
    """out.* file name → (data lines, distinct pairs, |left|, |right|) from SOURCES.md."""
    stats = {}
    for line in (shared / "konect" / "SOURCES.md").read_text().splitlines():
        m = re.match(r"\| `(?:[^`]*/)?(out\.[^`/]+)` \| `[0-9a-f]+…` \| (\d+) \| (\d+) \| "
                     r"L=(\d+) \[[^]]*\], R=(\d+) ", line)
        if m:
            stats[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    return stats


@pytest.fixture(scope="module")
def mirror_edges(konect_mirror, tmp_path_factory):
    """KONECT name → extracted out.* path (plain tarfile: independent of mbebench.archive)."""
    root = tmp_path_factory.mktemp("mirror")
    files = {}
    for arc in sorted(konect_mirror.glob("download.tsv.*.tar.bz2")):
        name = arc.name[len("download.tsv.") : -len(".tar.bz2")]
        with tarfile.open(arc, "r:bz2") as tf:
            (member,) = [m for m in tf.getmembers() if Path(m.name).name.startswith("out.")]
            target = root / Path(member.name).name
            target.write_bytes(tf.extractfile(member).read())
        files[name] = target
    return files


PAPER_IN_MIRROR = [
    "brunson_corporate-leadership", "unicodelang", "opsahl-ucforum", "movielens-10m_ut",
    "movielens-10m_ui", "movielens-10m_ti", "marvel", "youtube-groupmemberships",
]


@pytest.mark.mirror
@pytest.mark.parametrize("name", PAPER_IN_MIRROR)
def test_mirror_paper_sizes(shared_dir, mirror_edges, name):
    u, v, e = paper_sizes(shared_dir)[name]
    el = parse_edge_list(mirror_edges[name], dataset=name)
    # The paper does not say which side is U, so compare the pair of sizes.
    assert sorted((el.n_left, el.n_right)) == sorted((u, v))
    assert el.n_edges == e
    assert konect._fast(mirror_edges[name].read_bytes()) is not None


@pytest.mark.mirror
def test_mirror_matches_measured_statistics(shared_dir, mirror_edges):
    stats = measured_stats(shared_dir)
    checked = 0
    for path in mirror_edges.values():
        if path.name not in stats:
            continue
        lines, distinct, n_left, n_right = stats[path.name]
        el = parse_edge_list(path)
        got = (el.n_lines, el.n_edges, el.n_left, el.n_right)
        assert got == (lines, distinct, n_left, n_right), path.name
        checked += 1
    # marvel, unicodelang, moreno_crime and the 11 extras are listed by file name.
    assert checked >= 14


@pytest.mark.mirror
def test_mirror_marvel_shared_id_space(mirror_edges):
    el = parse_edge_list(mirror_edges["marvel"])
    assert (int(el.right_ids[0]), int(el.right_ids[-1])) == (6487, 19428)
    assert el.right_ids.size == 19428 - 6487 + 1 == el.n_right


@pytest.mark.mirror
@pytest.mark.parametrize("name", ["youtube-groupmemberships", "marvel"])
def test_mirror_parse_time(mirror_edges, name, monkeypatch):
    # the real files never fall back to the per-line scan (numpy: under a second for
    # YouTube's 293k lines; the scan: many seconds)
    scans = _count_line_scans(monkeypatch)
    t = time.perf_counter()
    el = parse_edge_list(mirror_edges[name])
    print(f"\nparse {name}: {el.n_lines} lines in {time.perf_counter() - t:.3f} s")
    assert scans == [] and el.n_lines > 90_000


# ---------------------------------------------------------------------------
# Bounded resources and clear errors on any input.


def test_id_of_5000_digits_is_too_large_at_its_line(tmp_path):
    p = write(tmp_path, "% bip unweighted\n1 2\n" + "9" * 5000 + " 1\n")
    with pytest.raises(KonectParseError) as exc:
        parse_edge_list(p, dataset="Toy")
    msg = str(exc.value)
    assert msg.startswith(f"dataset 'Toy': {p}:3: left id '99999")
    assert msg.endswith("id too large (must be below 2**31)")
    assert "5000 characters" in msg and len(msg) < 300


def test_id_padded_with_5000_zeros_is_still_an_id(tmp_path):
    el = parse_edge_list(write(tmp_path, "0" * 5000 + "7 1\n1 1\n"))
    assert el.left_ids.tolist() == [1, 7]


@pytest.mark.parametrize("header", ["% sym unweighted", "% asym positive", "%sym", "% asym\t2"])
def test_non_bipartite_header_is_refused(tmp_path, header):
    p = write(tmp_path, f"\n{header}\n1 2\n2 3\n")
    with pytest.raises(KonectParseError) as exc:
        parse_edge_list(p, dataset="Toy")
    msg = str(exc.value)
    assert msg.startswith(f"dataset 'Toy': {p}:2: header ")
    assert "not bipartite" in msg and "allow_non_bipartite: true" in msg


def test_non_bipartite_file_read_as_two_sides_when_allowed(tmp_path):
    el = parse_edge_list(write(tmp_path, "% sym unweighted\n1 2\n2 3\n"), allow_non_bipartite=True)
    assert edge_set(el) == {(1, 2), (2, 3)}
    assert (el.n_left, el.n_right, el.header) == (2, 2, "% sym unweighted")


@pytest.mark.parametrize("header", ["% bip unweighted", "% symmetric-looking comment", "% 3 2 2"])
def test_other_headers_are_accepted(tmp_path, header):
    assert parse_edge_list(write(tmp_path, f"{header}\n1 2\n")).n_edges == 1


def test_only_the_first_comment_line_is_the_format_line(tmp_path):
    assert parse_edge_list(write(tmp_path, "% bip unweighted\n% sym\n1 2\n")).n_edges == 1


def test_overlong_line_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(konect, "CHUNK_BYTES", 64)
    monkeypatch.setattr(konect, "MAX_LINE_BYTES", 100)
    p = write(tmp_path, "1 2\n" + "1" * 1000 + " 2\n")
    with pytest.raises(KonectParseError, match=re.escape(f"{p}:2: line longer than 100 bytes")):
        parse_edge_list(p)


def test_out_of_memory_names_dataset_and_file(tmp_path, monkeypatch):
    def no_memory(*args):
        raise MemoryError("Unable to allocate 1.00 GiB for an array with shape (134217728,)")

    monkeypatch.setattr(konect, "_build", no_memory)
    p = write(tmp_path, "1 2\n")
    with pytest.raises(konect.KonectMemoryError) as exc:
        parse_edge_list(p, dataset="Toy")
    assert str(exc.value) == (f"dataset 'Toy': {p}: out of memory while parsing (Unable to "
                              "allocate 1.00 GiB for an array with shape (134217728,))")
    assert isinstance(exc.value, MemoryError)


def test_read_error_names_dataset_and_file(tmp_path):
    # A folder: reading it fails with EISDIR.
    with pytest.raises(KonectParseError, match=re.escape(f"dataset 'Toy': {tmp_path}: cannot")):
        parse_edge_list(tmp_path, dataset="Toy")


# Blocks split the file anywhere between lines: tiny blocks must give the same
# graph, header, line count and error line as one block.
@settings(max_examples=150, **PROPERTY)
@given(data=st.one_of(konect_files(), messy_files()), chunk=st.sampled_from([1, 2, 3, 7, 64]))
def test_tiny_blocks_parse_like_one_block(tmp_path, data, chunk):
    p = write(tmp_path, data)
    expected, info = reference_parse(data)
    konect.CHUNK_BYTES, saved = chunk, konect.CHUNK_BYTES
    try:
        if expected is None:
            with pytest.raises(KonectParseError, match=rf"{re.escape(str(p))}:{info}: "):
                parse_edge_list(p)
        elif info == 0:
            with pytest.raises(KonectParseError, match="no edges"):
                parse_edge_list(p)
        else:
            el = parse_edge_list(p)
            assert edge_set(el) == expected and el.n_lines == info
            konect.CHUNK_BYTES = saved
            whole = parse_edge_list(p)
            assert el.header == whole.header
            assert (el.left.tolist(), el.right.tolist()) == (whole.left.tolist(),
                                                             whole.right.tolist())
    finally:
        konect.CHUNK_BYTES = saved


_PEAK_CHILD = r"""
import re, sys
from pathlib import Path
from mbebench import konect
def hwm():
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024
base = hwm()
el = konect.parse_edge_list(sys.argv[1])
print(el.n_lines, hwm() - base)
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_peak_memory_per_edge_line(tmp_path):
    # The bound: at most 64 bytes per edge line plus a constant (the
    # interpreter, one block).  The whole-file parser needed ~170.
    n = 1_000_000
    rng = np.random.default_rng(3)
    u, v = rng.integers(1, n // 10, n), rng.integers(1, n // 20, n)
    p = tmp_path / "out.big"
    with open(p, "w") as f:
        f.write("% bip unweighted\n")
        f.write("".join(f"{a}\t{b}\n" for a, b in zip(u.tolist(), v.tolist())))
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _PEAK_CHILD, str(p)], check=True,
                         capture_output=True, text=True).stdout.split()
    lines, extra = int(out[0]), int(out[1])
    assert lines == n
    assert extra < 64 * n + 20 * 2**20, f"{extra / n:.0f} bytes per edge line"
