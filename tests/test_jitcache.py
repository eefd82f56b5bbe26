"""numba's disk cache must not serve machine code built from an older version of a
function that a kernel compiles in from another module (issue 21, finding 3)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mbebench import jitcache

REPO = Path(__file__).resolve().parents[1]

# A kernel the way the engines write one: disk-cached, calling the fingerprint's helpers.
# (The engines' own kernels take a minute to compile on a busy two-core machine.)
PROBE = """
from numba import njit

from mbebench.fingerprint import right_elem_nb
from mbebench.jitcache import keyed


@keyed
@njit(cache=True)
def probe(v):
    return right_elem_nb(v)
"""
RUN = ("import json, probe\n"
       "print(json.dumps([int(probe.probe(5)), sum(probe.probe.stats.cache_hits.values())]))\n")


def _copy(tmp: Path) -> Path:
    work = tmp / "repo"
    for pkg in ("mbebench", "baselines", "cumbe"):
        shutil.copytree(REPO / pkg, work / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "probe.py").write_text(PROBE)
    return work


def _probe(work: Path) -> tuple[int, bool]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(work)
    p = subprocess.run([sys.executable, "-c", RUN], cwd=work, env=env, capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    value, hits = json.loads(p.stdout.splitlines()[-1])
    return value, bool(hits)


def test_an_edit_to_a_compiled_in_helper_is_never_served_from_the_cache(tmp_path):
    work = _copy(tmp_path)
    fp, hit = _probe(work)
    assert not hit
    assert _probe(work) == (fp, True)  # the disk cache works: the unchanged code is loaded
    fpmod = work / "mbebench" / "fingerprint.py"
    text = fpmod.read_text()
    broken = text.replace("return mix(np.uint64(v) * U2 + U2)",
                          "return mix(np.uint64(v) * U2 + U1)")
    assert broken != text
    fpmod.write_text(broken)
    edited, hit = _probe(work)
    assert not hit and edited != fp
    for cache in work.rglob("__pycache__"):
        shutil.rmtree(cache)
    assert _probe(work) == (edited, False)  # what a clean build computes


def test_every_engine_kernel_is_keyed_on_the_modules_it_compiles_in():
    import baselines._imbea_kernel  # noqa: F401
    import baselines._parmbe_kernel  # noqa: F401
    import cumbe.kernel  # noqa: F401
    import cumbe.prepare  # noqa: F401

    assert "mbebench.fingerprint" in jitcache.modules_compiled_in("baselines._imbea_kernel")
    assert "mbebench.fingerprint" in jitcache.modules_compiled_in("baselines._parmbe_kernel")
    assert {"cumbe.layout", "mbebench.fingerprint"} <= set(
        jitcache.modules_compiled_in("cumbe.kernel"))
    # the preparation's cache key: every module the preparation imports, late ones too
    assert "mbebench.order" in jitcache.imported_modules("cumbe.prepare", "cumbe.layout")
    # every disk-cached function of a module that can compile in another goes through
    # jitcache.keyed (benchmarks/parmbe_probe.py imports nothing of ours)
    for path in [*REPO.glob("baselines/*.py"), *REPO.glob("cumbe/**/*.py"),
                 *REPO.glob("mbebench/*.py"), *REPO.glob("benchmarks/*.py")]:
        text = path.read_text()
        if path.name == "jitcache.py" or not re.search(r"^from (mbebench|baselines|cumbe)", text,
                                                        flags=re.M):
            continue
        lines = text.splitlines()
        for i, line in enumerate(lines):
            if "jit(cache=True" in line.replace(" ", "") and line.lstrip().startswith("@"):
                assert lines[i - 1].strip() == "@keyed", f"{path.name}:{i + 1}"


def _cumbe_key():
    # cuMBE caches only on a GPU; its key is computed without one
    from cumbe import kernel

    if kernel.SIM:
        pytest.skip("the CUDA simulator has no disk cache")
    kern = kernel.build(threads=64, cache=True)
    return lambda: kern._cache._index_key((), type("C", (), {"magic_tuple": lambda self: ("x",)})())


def test_the_cumbe_kernel_cache_key_carries_the_sources_digest():
    assert _cumbe_key()()[-1] == jitcache.sources_digest("cumbe.kernel")


def test_an_edit_to_any_cumbe_kernel_module_changes_its_cache_key(tmp_path, monkeypatch):
    # The kernel is made by factories in the modules of the cumbe.kernel package (and the
    # jit options in its __init__): an edit to any of them must be a cache miss.  The
    # digest reads a copy of the sources here, which the test edits one file at a time.
    key = _cumbe_key()
    work = _copy(tmp_path)
    real = jitcache._repo_file

    def copied(name):
        path = real(name)
        return None if path is None else work / path.relative_to(REPO)

    monkeypatch.setattr(jitcache, "ROOT", work)
    monkeypatch.setattr(jitcache, "_repo_file", copied)
    monkeypatch.setattr(jitcache, "_digests", {})
    before = key()
    files = sorted((work / "cumbe" / "kernel").glob("*.py"))
    assert {f.stem for f in files} >= {"__init__", "fetch", "search", "stealing", "maximality",
                                       "stages", "sync", "consts", "lists"}
    for f in [*files, work / "cumbe" / "layout.py", work / "mbebench" / "fingerprint.py"]:
        text = f.read_text()
        f.write_text(text + "\n# edited\n")
        jitcache._digests.clear()
        assert key() != before, f"an edit to {f.relative_to(work)} keeps the cuMBE cache key"
        f.write_text(text)
        jitcache._digests.clear()
        assert key() == before


def test_imports_digest_reads_the_files_again_without_its_memo(tmp_path, monkeypatch):
    work = _copy(tmp_path)
    monkeypatch.setattr(jitcache, "ROOT", work)
    monkeypatch.setattr(jitcache, "_digests", {})
    before = jitcache.imports_digest("baselines.parmbe_aot")
    f = work / "baselines" / "parmbe_aot.py"
    f.write_text(f.read_text() + "\n# edited\n")
    assert jitcache.imports_digest("baselines.parmbe_aot") == before  # memoised
    edited = jitcache.imports_digest("baselines.parmbe_aot", memo=False)
    assert edited != before
    assert jitcache.imports_digest("baselines.parmbe_aot") == before  # the memo kept
    jitcache._digests.clear()
    assert jitcache.imports_digest("baselines.parmbe_aot") == edited


def test_the_import_scan_finds_every_import_a_full_parse_finds():
    """imports_digest reads only the lines that start an import (a run's start does not
    parse the kernel's sources whole): on every module of ours, and on the cases that it
    must hand to a full parse, it finds what ast finds."""
    import ast

    def names(nodes):
        return {(getattr(n, "level", 0), getattr(n, "module", None), a.name)
                for n in nodes if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}

    sources = [p.read_bytes() for pkg in ("cumbe", "mbebench", "baselines")
               for p in (REPO / pkg).rglob("*.py")]
    sources += [b"x = 1; import os\n", b"if x: from a import b\n",
                b"from a import (b,\n    c)\nimport d, \\\n  e\n"]
    for src in sources:
        assert names(ast.walk(ast.parse(src))) <= names(jitcache._import_statements(src))


# Builds of one factory are one function to numba: they share one cache index.
FACTORY = """
from numba import njit

from mbebench.jitcache import keyed


def build(c):
    @keyed
    @njit(cache=True)
    def probe(v):
        return v * 0 + c

    return probe
"""
# Compile one build while numba's cache writes are slowed: its index after ``idx`` s, its
# data ``data`` s later.  Both children pass a barrier first, so their saves overlap.
SAVER = """
import json, os, sys, time
from pathlib import Path
from numba.core import caching

c, idx, data, barrier = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), Path(sys.argv[4])
F = caching.IndexDataCacheFile
save_index, save_data = F._save_index, F._save_data
F._save_index = lambda self, o: (time.sleep(idx), save_index(self, o))[1]
F._save_data = lambda self, n, d: (time.sleep(data), save_data(self, n, d))[1]
import factory
(barrier / str(c)).touch()
while len(list(barrier.iterdir())) < 2:
    time.sleep(0.01)
print(json.dumps(int(factory.build(c)(1))))
"""
LOADER = ("import json, factory\n"
          "fs = [factory.build(c) for c in (1, 2)]\n"
          "print(json.dumps([int(f(1)) for f in fs] + [sum(f.stats.cache_hits.values()) "
          "for f in fs]))\n")


def test_two_processes_saving_two_builds_at_once_never_cross_their_cache_entries(tmp_path):
    # Unlocked, build 1 reads the empty index, names its data file 1 and writes the index
    # at 1.5 s and its data at 6 s; build 2 read the same empty index, so it writes
    # {build 2: file 1} at 3 s and its data at 3 s, which build 1 then overwrites: the index
    # names build 1's code for build 2, and a later process gets 1 from build(2).
    work = _copy(tmp_path)
    (work / "factory.py").write_text(FACTORY)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(work)
    kids = [subprocess.Popen([sys.executable, "-c", SAVER, str(c), idx, data, str(barrier)],
                             cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
            for c, idx, data in ((1, "1.5", "4.5"), (2, "3", "0"))]
    for c, kid in enumerate(kids, 1):
        out, err = kid.communicate(timeout=600)
        assert kid.returncode == 0, err[-3000:]
        assert json.loads(out.splitlines()[-1]) == c
    p = subprocess.run([sys.executable, "-c", LOADER], cwd=work, env=env, capture_output=True,
                       text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    one, two, hits1, hits2 = json.loads(p.stdout.splitlines()[-1])
    assert (one, two) == (1, 2)
    assert hits1 and hits2  # both served from the cache: the saves were not lost either


def test_a_lock_the_file_system_refuses_is_skipped_not_an_error(tmp_path, monkeypatch):
    # NFS without lock support: flock raises; the save goes on unlocked, never fails a compile
    import fcntl

    def refuse(f, op):
        raise OSError(37, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    seen = []
    with jitcache._lock_if_allowed(tmp_path / "c" / "x.nbi.lock"):
        seen.append(True)
    assert seen == [True] and (tmp_path / "c" / "x.nbi.lock").exists()

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(jitcache, "open", read_only, raising=False)
    with jitcache._lock_if_allowed(tmp_path / "c" / "y.nbi.lock"):  # no lock file can be made
        seen.append(True)
    assert seen == [True, True] and not (tmp_path / "c" / "y.nbi.lock").exists()
