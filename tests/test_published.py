"""The published codes' machinery (mbebench.published) without internet or GPU.

A stand-in "upstream" (tests/published_upstream/standin.cpp: the real codes' command lines
and count lines, a brute-force count) is packed as GitHub packs an archive of a commit
(``<repo>-<commit>/`` top folder, the commit id in the pax header) into a ``file://``
mirror laid out as ``<owner>/<repo>/archive/<commit>.tar.gz``; then downloaded, verified,
patched, built, run and read like the real codes.  Tests that compile it are skipped on a
machine without a C++ compiler.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest

from mbebench import plan
from mbebench.csr import from_edges
from mbebench.engine import EngineSkipped
from mbebench.oracle import count_and_fingerprint
from mbebench.published import build, engine, fetch, inputs, output
from mbebench.published.codes import CODES, NEEDS, SPECS, Code, Repo
from mbebench.report.agreement import mismatches

UPSTREAM = Path(__file__).with_name("published_upstream")
COMMIT = "0123456789abcdef0123456789abcdef01234567"
needs_cxx = pytest.mark.skipif(shutil.which("g++") is None, reason="no g++ here")


def crown(n):
    """S_n: K_{n,n} without a perfect matching; 2^n - 2 maximal bicliques."""
    left = [i for i in range(n) for j in range(n) if i != j]
    right = [j for i in range(n) for j in range(n) if i != j]
    return from_edges(np.array(left), np.array(right), n, n)


def fig1():
    edges = [(0, 0), (0, 1), (1, 1), (1, 2), (2, 0), (2, 2), (2, 3), (3, 3), (3, 4), (4, 4),
             (4, 5), (4, 0)]
    left, right = zip(*edges)
    return from_edges(np.array(left), np.array(right), 5, 6)


def pack(mirror: Path, owner: str, name: str, commit: str, files: dict[str, bytes],
         header_commit: str | None = None) -> Path:
    """An archive as GitHub serves it, in a mirror folder; returns its path."""
    out = mirror / owner / name / "archive" / f"{commit}.tar.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": header_commit or commit}) as tar:
        top = tarfile.TarInfo(f"{name}-{commit}")
        top.type = tarfile.DIRTYPE
        tar.addfile(top)
        for rel, data in files.items():
            info = tarfile.TarInfo(f"{name}-{commit}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


def digest(files: dict[str, bytes], paths=("src",)) -> str:
    lines = sorted(f"{rel} {hashlib.sha256(data).hexdigest()}\n" for rel, data in files.items()
                   if any(rel == p or rel.startswith(p + "/") for p in paths))
    return hashlib.sha256("".join(lines).encode()).hexdigest()


SOURCES = {"src/standin.cpp": (UPSTREAM / "standin.cpp").read_bytes(),
           "README.md": b"not part of the digest\n"}
REPO = Repo("mbe-test", "standin", COMMIT, tree_paths=("src",), tree_sha256=digest(SOURCES))
BUILD = ("cd src && ${CXX:-g++} -O1 -o standin standin.cpp",)


def standin(name="standin-adambe", argv=lambda p: ["-i", "{input}", "-s", "7"], **kw) -> Code:
    fields = {"name": name, "title": name, "repo": REPO, "needs": ("cxx",), "build": BUILD,
              "binary": "src/standin", "argv": argv, "input": "adj", "output": "adambe"}
    fields.update(kw)
    return Code(**fields)


@pytest.fixture
def mirror(tmp_path):
    pack(tmp_path / "mirror", REPO.owner, REPO.name, COMMIT, SOURCES)
    return tmp_path / "mirror"


@pytest.fixture
def root(tmp_path):
    return tmp_path / "engines"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One verified download and build of the stand-in, shared by the run tests."""
    if shutil.which("g++") is None:
        pytest.skip("no g++ here")
    tmp = tmp_path_factory.mktemp("published")
    pack(tmp / "mirror", REPO.owner, REPO.name, COMMIT, SOURCES)
    got = fetch.download(REPO, tmp / "engines", github_url=(tmp / "mirror").as_uri() + "/")
    assert got["status"] == "ok", got
    return tmp / "engines"


def run_as(code: Code, root: Path, graph, **params):
    out = build.build(code, root)
    assert out["status"] == "ok", out
    return engine.run_code(code, graph, params, root=root)


# ----------------------------------------------------------------- download and verify


def test_download_from_a_file_url_and_from_a_folder(mirror, root, tmp_path):
    got = fetch.download(REPO, root, github_url=mirror.as_uri())
    assert got["status"] == "ok", got
    assert got["tree_sha256"] == REPO.tree_sha256
    assert got["url"].endswith(f"mbe-test/standin/archive/{COMMIT}.tar.gz")
    assert fetch.archive_path(root, REPO).is_file()
    # a plain folder holding the same layout is a mirror too
    again = fetch.download(REPO, tmp_path / "other", github_url=str(mirror))
    assert again["status"] == "ok" and again["archive_sha256"] == got["archive_sha256"]


def test_an_archive_of_another_commit_is_refused(tmp_path, root):
    mirror = tmp_path / "mirror"
    pack(mirror, REPO.owner, REPO.name, COMMIT, SOURCES, header_commit="f" * 40)
    got = fetch.download(REPO, root, github_url=str(mirror))
    assert got["status"] == "failed"
    assert "not the pinned one" in got["reason"] and "f" * 40 in got["reason"]
    assert not fetch.archive_path(root, REPO).exists()


def test_changed_sources_are_refused(tmp_path, root):
    mirror = tmp_path / "mirror"
    pack(mirror, REPO.owner, REPO.name, COMMIT,
         {**SOURCES, "src/standin.cpp": SOURCES["src/standin.cpp"] + b"// changed\n"})
    got = fetch.download(REPO, root, github_url=str(mirror))
    assert got["status"] == "failed" and "differ from the pinned ones" in got["reason"]


def test_files_outside_the_digest_do_not_matter(tmp_path, root):
    mirror = tmp_path / "mirror"
    pack(mirror, REPO.owner, REPO.name, COMMIT, {**SOURCES, "README.md": b"other\n"})
    assert fetch.download(REPO, root, github_url=str(mirror))["status"] == "ok"


def test_a_pinned_archive_checksum_is_checked(mirror, root):
    pinned = dataclasses.replace(REPO, archive_sha256="0" * 64)
    got = fetch.download(pinned, root, github_url=str(mirror))
    assert got["status"] == "failed" and "sha256 mismatch" in got["reason"]


def test_a_missing_archive_is_one_line(tmp_path, root):
    got = fetch.download(REPO, root, github_url=str(tmp_path / "empty"), retries=1)
    assert got["status"] == "failed"
    assert "mbe-test/standin" in got["reason"] and "\n" not in got["reason"]


def test_members_outside_the_top_folder_are_refused(tmp_path, root):
    bad = tmp_path / "mirror" / REPO.owner / REPO.name / "archive" / f"{COMMIT}.tar.gz"
    bad.parent.mkdir(parents=True)
    with tarfile.open(bad, "w:gz", format=tarfile.PAX_FORMAT,
                      pax_headers={"comment": COMMIT}) as tar:
        info = tarfile.TarInfo("../evil")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    got = fetch.download(REPO, root, github_url=str(tmp_path / "mirror"))
    assert got["status"] == "failed" and "outside the top folder" in got["reason"]


def test_the_pinned_digests_are_those_of_the_real_trees():
    # the digest of a real tree is pinned in codes.py from the fetched repositories; here
    # only its form, and that each code's repository is pinned to a full commit id
    for code in CODES.values():
        assert len(code.repo.commit) == 40 and int(code.repo.commit, 16) >= 0
        assert len(code.repo.tree_sha256) == 64 and code.repo.tree_sha256 != "0" * 64
        assert code.repo.url().startswith("https://github.com/")
        assert set(code.needs) <= set(NEEDS) and code.output in output.PARSERS
        for name in code.patches:
            assert (build.PATCHES / name).is_file()


# ----------------------------------------------------------------- build


@needs_cxx
def test_build_patches_and_records(mirror, root, tmp_path):
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "note.patch").write_text(
        "--- a/src/standin.cpp\n+++ b/src/standin.cpp\n@@ -1,1 +1,2 @@\n"
        "+// patched by the test\n"
        + "".join(" " + line + "\n" for line in SOURCES["src/standin.cpp"].decode()
                  .splitlines()[:1])
    )
    code = standin(patches=("note.patch",), patch_dir=str(patches))
    assert fetch.download(REPO, root, github_url=str(mirror))["status"] == "ok"
    got = build.build(code, root)
    assert got["status"] == "ok", got
    tree = build.build_dir(root, code) / "src"
    assert (tree / "src" / "standin.cpp").read_text().startswith("// patched by the test\n")
    assert got["patches"] == build.patch_digests(code) and got["tree_sha256"] == REPO.tree_sha256
    assert "$ bash" in Path(got["log"]).read_text()
    assert build.current(root, code)
    # another patch makes the build stale: a run refuses it instead of running old code
    (patches / "note.patch").write_text((patches / "note.patch").read_text() + "\n")
    with pytest.raises(engine.PublishedError, match="not of the pinned commit and patches"):
        engine.run_code(code, crown(3), {}, root=root)


@needs_cxx
def test_a_failed_build_is_one_line_naming_the_code_and_its_log(mirror, root):
    fetch.download(REPO, root, github_url=str(mirror))
    code = standin(name="broken", build=("cd src && ${CXX:-g++} -o standin no-such-file.cpp",))
    got = build.build(code, root)
    assert got["status"] == "failed"
    assert got["reason"].startswith("build of broken failed")
    assert got["reason"].endswith(f"see {build.build_dir(root, code) / 'build.log'}")
    assert "\n" not in got["reason"]
    with pytest.raises(engine.PublishedError) as e:
        engine.run_code(code, crown(3), {}, root=root)
    assert str(e.value) == got["reason"]


def test_a_patch_that_does_not_apply_fails_the_build(mirror, root, tmp_path):
    if shutil.which("patch") is None:
        pytest.skip("no patch here")
    (tmp_path / "bad.patch").write_text(
        "--- a/src/standin.cpp\n+++ b/src/standin.cpp\n@@ -1,1 +1,1 @@\n-no such line\n+x\n")
    fetch.download(REPO, root, github_url=str(mirror))
    got = build.build(standin(patches=("bad.patch",), patch_dir=str(tmp_path)), root)
    assert got["status"] == "failed" and "patch bad.patch does not apply" in got["reason"]


def test_without_the_source_the_build_fails(root):
    got = build.build(standin(), root)
    assert got["status"] == "failed" and "no source" in got["reason"]


def test_without_the_toolchain_the_build_and_its_runs_are_skipped(root, monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler")
    code = standin()
    got = build.build(code, root)
    assert got["status"] == "skipped"
    assert got["reason"] == "no C++ compiler (no-such-compiler not on PATH)"
    with pytest.raises(EngineSkipped, match="no-such-compiler"):
        engine.run_code(code, crown(3), {}, root=root)


def test_gpu_codes_are_skipped_without_nvcc_or_gpu(root, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # neither nvcc nor nvidia-smi
    for name in ("gmbe", "cumbe_orig"):
        got = build.build(CODES[name], root)
        assert got["status"] == "skipped"
        assert got["reason"].startswith("no nvcc/GPU")
        with pytest.raises(EngineSkipped, match="^no nvcc/GPU"):
            engine.run_code(CODES[name], crown(3), {}, root=root)


def test_a_run_without_a_build_says_so(root):
    with pytest.raises(engine.PublishedError, match="not built"):
        engine.run_code(standin(), crown(3), {}, root=root)


# ----------------------------------------------------------------- run and read


@pytest.mark.parametrize("graph", [crown(3), crown(5), fig1()], ids=["crown3", "crown5", "fig1"])
@pytest.mark.parametrize("shape,argv,fmt", [
    ("adambe", lambda p: ["-i", "{input}", "-s", "7"], "adambe"),
    ("oombea", lambda p: ["{input}"], "oombea"),
    ("gmbe", lambda p: ["-i", "{input}", "-s", "2", "-f"], "gmbe"),
])
def test_runs_read_the_count_of_each_output_format(built, graph, shape, argv, fmt):
    code = standin(name=f"standin-{shape}", argv=argv, output=fmt)
    got = run_as(code, built, graph)
    assert got.count == count_and_fingerprint(graph)[0]
    assert got.fingerprint is None and got.stats["count_only"]
    assert got.algo_seconds >= 0 and got.stats["process_wall_s"] >= got.algo_seconds


def test_a_32_bit_count_past_the_int_range_is_flagged(built):
    graph = crown(3)  # 6 bicliques; -w takes the int past 2^31 - 1
    narrow = standin(name="standin-gmbe32", output="gmbe", count_bits=32,
                     argv=lambda p: ["-i", "{input}", "-s", "2", "-f", "-w", str(2**31 - 6)])
    with pytest.raises(output.CountsIn32Bits, match="counts in 32 bits"):
        run_as(narrow, built, graph)
    # the same count from a code that counts in 64 bits is a count (a wrong one, here)
    wide = standin(name="standin-wide", argv=lambda p: ["-i", "{input}", "-w", str(2**31 - 6)])
    assert run_as(wide, built, graph).count == 2**31


def test_a_wrong_count_is_a_mismatch(built):
    graph = crown(4)
    wrong = standin(name="standin-wrong", argv=lambda p: ["-i", "{input}", "-w", "1"])
    got = run_as(wrong, built, graph)
    truth, fp = count_and_fingerprint(graph)
    assert got.count == truth + 1
    rows = [
        {"dataset": "crown-4", "engine": "imbea", "label": "iMBEA", "status": "ok",
         "count": truth, "fingerprint": hex(fp), "timed": True, "params": {}},
        {"dataset": "crown-4", "engine": "standin-wrong", "label": "stand-in", "status": "ok",
         "count": got.count, "fingerprint": None, "timed": True, "params": {}},
    ]
    assert "crown-4" in mismatches(rows)
    rows[1]["count"] = truth
    assert "crown-4" not in mismatches(rows)


def test_a_failing_program_is_an_error_with_its_last_line(built):
    code = standin(name="standin-noinput", argv=lambda p: ["-s", "7"])
    with pytest.raises(engine.PublishedError, match="exited with code 1: usage: standin"):
        run_as(code, built, crown(3))


# ----------------------------------------------------------------- parsers and inputs


def test_parsers_read_the_real_codes_lines():
    # lines as the real programs print them (AdaMBE and ooMBEA: seen from their builds here;
    # GMBE and cuMBE: their PrintResult / main)
    assert output.adambe("c, AdaMBEFinder, 0.000055, 3.884000, 254, 254, 64\n") == (254, 5.5e-05)
    assert output.adambe("task:0\n0\nc, ParAdaMBEFinder, 0.000901, 4.5, 254, 254, 64, 2\n") \
        == (254, 0.000901)
    assert output.oombea("c, ooMBEAFinder, 0.000274, 3.74, 254, 575, 7, 4.000000\n") \
        == (254, 0.000274)
    assert output.gmbe("Graph load time: 0.1 s\nTotal processing time: 1.5 seconds\n"
                       "maximal nodes:-2\n\n") == (-2, 1.5)
    assert output.cumbe_orig("grid_size: 132, block_size: 512\nmaximal bicliques: 60210\n"
                             "runtime (s): 0.25\n") == (60210, 0.25)
    with pytest.raises(output.OutputError):
        output.adambe("Could not open file \"g.adj\". Bigraph building failed!\n")


def test_width_check():
    assert output.check_width("x", 2**31 - 1, 32) == 2**31 - 1
    assert output.check_width("x", 2**40, 64) == 2**40
    for bad in (2**31, -2):
        with pytest.raises(output.CountsIn32Bits):
            output.check_width("x", bad, 32)


def test_the_cumbe_input_is_its_csr_format():
    g = fig1()
    lines = inputs.bi_text(g).split("\n")
    assert lines[0] == f"{g.n_left} {g.n_right} {g.n_edges}" and lines[1] == ""
    heads = [tuple(map(int, ln.split())) for ln in lines[2:2 + g.n_left]]
    off = np.asarray(g.left_offsets)
    assert heads == [(off[u], off[u + 1] - off[u]) for u in range(g.n_left)]
    edges = [int(ln.split()[0]) for ln in lines[2 + g.n_left:] if ln]
    assert edges == list(np.asarray(g.left_indices))


# ----------------------------------------------------------------- config


def test_published_codes_are_off_unless_enabled():
    config = {"datasets": {"d": {"path": "x"}},
              "engines": {"repeats": 1, "timeout_s": 10, "parmbe": {"enabled": False},
                          "cumbe": {"enabled": False}}}
    assert {r.engine for r in plan.plan_runs(config, 4).values()} == {"imbea"}
    config["engines"]["adambe"] = {"enabled": True, "threads": [1, 4]}
    config["engines"]["oombea"] = {"enabled": True}
    runs = plan.plan_runs(config, 4)
    assert {r.engine for r in runs.values()} == {"imbea", "adambe", "oombea"}
    assert sorted(r.threads for r in runs.values() if r.engine == "adambe") == [1, 4]
    assert SPECS["adambe"].section_schema()["properties"]["enabled"]["default"] is False


def test_argv_of_each_code():
    assert CODES["adambe"].args({"threads": 1}, "g.adj") == ["-i", "g.adj", "-s", "7"]
    assert CODES["adambe"].args({"threads": 16}, "g.adj") == ["-i", "g.adj", "-s", "8", "-t",
                                                              "16"]
    assert CODES["gmbe"].args({"devices": 1}, "g.adj") == ["-i", "g.adj", "-s", "2", "-f"]
    assert CODES["gmbe"].args({"devices": 4}, "g.adj")[2:] == ["-s", "3", "-x", "4", "-f"]
    assert SPECS["gmbe"].gpus_for({"devices": 4}) == 4
    assert CODES["oombea"].args({}, "g.adj") == ["g.adj"]


def test_the_vs_paper_serial_comparison_takes_oombea_when_it_ran():
    from mbebench.report import vs_paper
    from tests.rowfactory import cumbe, imbea, make_row

    rows = [cumbe("Marvel", algo_s=[0.04]), imbea("Marvel", algo_s=[0.6])]
    assert vs_paper.ours(rows, "Marvel", "serial") == pytest.approx(0.6 / 0.04)
    rows.append(make_row("Marvel", "oombea", label="ooMBE", fingerprint=None, algo_s=[0.3]))
    assert vs_paper.ours(rows, "Marvel", "serial") == pytest.approx(0.3 / 0.04)


def test_the_steps_the_rules_call_record_and_say_one_line(tmp_path):
    import subprocess
    import sys

    repo = CODES["gmbe"].repo
    env = {"PATH": str(tmp_path), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    common = [sys.executable, "-m", "mbebench.published"]
    got = subprocess.run([*common, "download", "--slug", repo.slug, "--root", str(tmp_path),
                          "--github-url", str(tmp_path / "empty"), "--retries", "1"],
                         env=env, capture_output=True, text=True, check=False)
    assert got.returncode == 0, got.stderr
    assert got.stderr.startswith(f"ISCS-ZJU/GMBE@{repo.commit[:12]}: failed: ")
    assert len(got.stderr.splitlines()) == 1
    assert fetch.read_receipt(fetch.receipt_path(tmp_path, repo))["status"] == "failed"
    got = subprocess.run([*common, "build", "--code", "gmbe", "--root", str(tmp_path)],
                         env=env, capture_output=True, text=True, check=False)
    assert got.returncode == 0
    assert got.stderr == "gmbe: skipped: no nvcc/GPU (nvcc not on PATH)\n"


def test_retry_tokens_rerun_failed_steps_only(tmp_path, monkeypatch):
    from mbebench.atomic import write_json
    from mbebench.published import pipeline

    monkeypatch.chdir(tmp_path)
    code = CODES["oombea"]
    receipt = Path(pipeline.build_receipt("oombea"))
    commit = code.repo.commit[:12]
    assert pipeline.build_retry("oombea", commit) == "0"  # no receipt: the job runs anyway
    for status, retry, token in (("failed", "0", "1"), ("failed", "1", "2"), ("ok", "2", "2"),
                                 ("skipped", "3", "3")):
        write_json(receipt, {"status": status, "retry": retry})
        assert pipeline.build_retry("oombea", commit) == token, status
    download = Path(pipeline.download_receipt("oombea"))
    write_json(download, {"status": "failed", "retry": "4"})
    assert pipeline.download_retry(code.repo.slug) == "5"
    assert pipeline.build_receipt("imbea") is None


def test_built_is_true_only_for_a_current_ok_build(monkeypatch, tmp_path):
    from mbebench.atomic import write_json
    from mbebench.published import pipeline

    monkeypatch.chdir(tmp_path)
    code = CODES["oombea"]
    receipt = Path(pipeline.build_receipt("oombea"))
    assert not pipeline.built("oombea")
    ok = {"status": "ok", "commit": code.repo.commit, "patches": build.patch_digests(code)}
    write_json(receipt, ok)
    assert pipeline.built("oombea")
    write_json(receipt, {**ok, "commit": "f" * 40})
    assert not pipeline.built("oombea")
    write_json(receipt, {**ok, "status": "skipped"})
    assert not pipeline.built("oombea")
