"""ParMBE's ahead-of-time kernels (baselines/parmbe_aot.py): the same results as numba's JIT
kernels and the brute-force oracle, a run that never imports numba, a key that an edited
source changes, the off switch, and a failed or concurrent build.

The extension is built once per test session (:func:`aot`, into the cache every ParMBE run
of this checkout uses), 5-16 s on 2 cores; the rest of the file takes a few seconds."""

from __future__ import annotations

import importlib.machinery
import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baselines import parmbe, parmbe_aot
from mbebench import jitcache
from mbebench.oracle import count_and_fingerprint
from test_parmbe import hub_graph, random_graph, small_graphs

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def aot():
    """The extension of this checkout, built first if the cache has none."""
    mod = parmbe_aot.load()
    if mod is None:
        path = parmbe_aot.build()
        failed = parmbe_aot.cache_dir() / f"{parmbe_aot.module_name()}.failed"
        assert path is not None, f"the ahead-of-time build failed: {failed}"
        mod = parmbe_aot.load()
    assert mod is not None
    return parmbe_aot.Aot(mod)


def _serial(kern, g, **kw):
    """run_serial with ``kern`` as this process's kernels."""
    old = parmbe_aot._KERNELS
    parmbe_aot._KERNELS = kern
    try:
        res = parmbe.run_serial(g, **kw)
    finally:
        parmbe_aot._KERNELS = old
    assert res.stats["kernels"] == kern.kind
    return res


_JIT = None


def _jit():
    global _JIT
    _JIT = _JIT or parmbe_aot.Jit()
    return _JIT


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    g=small_graphs(),
    threshold=st.sampled_from([-1, 0, 1, 2, 2048]),
    side=st.sampled_from(["smaller", "larger", "left", "right"]),
    shard=st.sampled_from(["0/1", "0/1", "1/3"]),
)
def test_aot_kernels_give_the_jit_kernels_results_and_the_oracles(aot, g, threshold, side,
                                                                  shard):
    kw = {"split_threshold": threshold, "side": side, "shard": shard}
    a, j = _serial(aot, g, **kw), _serial(_jit(), g, **kw)
    assert (a.count, a.fingerprint, a.stats["tasks"]) == (j.count, j.fingerprint, j.stats["tasks"])
    if shard == "0/1":
        assert (a.count, a.fingerprint) == count_and_fingerprint(g)


@pytest.mark.parametrize("processes, threshold", [(1, -1), (16, 3), (64, 0)])
def test_aot_plans_are_the_jit_plans(aot, processes, threshold):
    """Every planner kernel through the extension: the same tasks, item for item."""
    g = hub_graph(n_left=60, n_right=90, m=300, hubs=3, hub_deg=50, seed=4)
    plans = []
    for kern in (aot, _jit()):
        old, parmbe_aot._KERNELS = parmbe_aot._KERNELS, kern
        try:
            prep = parmbe._Prepared(g, True)
            plans.append([parmbe.plan_tasks(prep, processes, threshold, shard=s)
                          for s in ("0/1", "1/2")])
        finally:
            parmbe_aot._KERNELS = old
    for pa, pj in zip(*plans):
        for name in ("verts", "ks", "nks", "bounds", "task_costs"):
            np.testing.assert_array_equal(getattr(pa, name), getattr(pj, name), err_msg=name)


def test_aot_kernels_refuse_arrays_of_another_type(aot):
    """The extension's own wrapper checks only an array's item size."""
    f64 = np.zeros(4, np.float64)
    with pytest.raises(TypeError, match="item_bounds: argument 0 must be .* int32"):
        aot.item_bounds(np.zeros(4, np.float32), f64, 1.0, 8)
    with pytest.raises(TypeError, match="C-contiguous"):
        aot.item_bounds(np.zeros(8, np.int32)[::2], f64, 1.0, 8)


def module_digests() -> dict:
    """The bytes' digest of each repository module in the extension's key, read now."""
    import hashlib

    from baselines import parmbe_aot
    from mbebench import jitcache

    files = (jitcache._module_file(n) for n in jitcache.imported_modules(*parmbe_aot.SOURCES))
    return {str(f.relative_to(jitcache.ROOT)): hashlib.sha256(f.read_bytes()).hexdigest()[:12]
            for f in files}


PROBE = """
import json
import sys
from baselines import parmbe, parmbe_aot
from mbebench.csr import read_csr
""" + "\n" + inspect.getsource(module_digests) + """

def main():
    # what the parent checks first: the name this process computes, whether it loaded, numba
    print(parmbe_aot.module_name(), parmbe_aot.load() is not None, "numba" in sys.modules)
    g = read_csr(sys.argv[1])
    r = parmbe.run(g, processes=3)
    numba = "numba" in sys.modules
    s = parmbe.run_serial(g)  # (its warm-up compiles the shard assigner, mbebench.shard)
    print(r.stats["kernels"], s.stats["kernels"], numba, r.count, r.fingerprint, s.count,
          s.fingerprint)
    print(json.dumps(module_digests()))

if __name__ == "__main__":
    main()
"""


def test_a_run_with_the_aot_kernels_never_imports_numba(aot, tmp_path):
    """A fresh process: the extension loads, the pool forks, workers and parent run the
    search and the planner, and numba is never imported (an unsharded run: the shard
    assigner, mbebench.shard, is numba's)."""
    from mbebench.csr import write_csr

    g = hub_graph(n_left=14, n_right=30, m=40, hubs=2, hub_deg=12, seed=3)
    write_csr(g, tmp_path / "g.csr")
    (tmp_path / "probe.py").write_text(PROBE)
    # this key's extension, there since the fixture (built again only if it went missing;
    # the probe failed once in CI after a full suite, cause not found: the lines below say
    # which of name, file and numba it was)
    name, path = parmbe_aot.module_name(), parmbe_aot.build()
    assert path == parmbe_aot.entry_path(name) and path.is_file(), (name, path)
    r = subprocess.run([sys.executable, str(tmp_path / "probe.py"), str(tmp_path / "g.csr")],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    first, rest, digests = r.stdout.splitlines()[:3]
    numba_env = {k: v for k, v in os.environ.items() if k.startswith("NUMBA_")}
    # (seen once each in two full suites: the probe computed another name; the modules whose
    # bytes the probe read otherwise than this process reads them now, and whether this
    # process's memoised name still holds, say which)
    theirs, ours = json.loads(digests), module_digests()
    differ = sorted(f for f in {*theirs, *ours} if theirs.get(f) != ours.get(f))
    memo_holds = (jitcache.imports_digest(*parmbe_aot.SOURCES, memo=False)
                  == jitcache.imports_digest(*parmbe_aot.SOURCES))
    # (seen again 2026-12-05: same name, the file there, numba not imported, yet not loaded;
    # the probe's stderr says whether its import failed, see parmbe_aot.load)
    assert first.split() == [name, "True", "False"], (
        first, name, sorted(p.name for p in path.parent.iterdir()), numba_env, differ,
        memo_holds, r.stderr[-1500:])
    assert r.stderr == ""
    kinds_run, kind_serial, numba, *counts = rest.split()
    assert (kinds_run, kind_serial, numba) == ("aot", "aot", "False")
    want = count_and_fingerprint(g)
    assert list(map(int, counts)) == [*want, *want]


EDIT = """
import sys
from pathlib import Path
from baselines import parmbe_aot
from mbebench import jitcache
name = parmbe_aot.module_name()
print(name, parmbe_aot.load() is not None)
kernel = Path(parmbe_aot.ROOT) / "baselines" / "_parmbe_kernel.py"
kernel.write_text(kernel.read_text() + "\\n# an edit\\n")
jitcache._digests.clear()
edited = parmbe_aot.module_name()
print(edited, parmbe_aot.load(edited) is not None, "numba" in sys.modules)
"""


def test_an_edited_kernel_source_does_not_load_the_old_build(aot, tmp_path):
    """A copy of the checkout finds this checkout's build under the same name (the key
    holds no path); after an edit of a kernel's source the name differs and nothing loads."""
    tree = tmp_path / "tree"
    for pkg in ("baselines", "mbebench"):
        shutil.copytree(REPO / pkg, tree / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "nbc" / "parmbe-aot"
    cache.mkdir(parents=True)
    shutil.copy(parmbe_aot.entry_path(), cache)
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin",
           "NUMBA_CACHE_DIR": str(tmp_path / "nbc")}
    r = subprocess.run([sys.executable, "-c", EDIT], capture_output=True, text=True,
                       env=env, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    first, second = (ln.split() for ln in r.stdout.splitlines())
    assert first == [parmbe_aot.module_name(), "True"]
    assert second[0] != first[0] and second[1:] == ["False", "False"]


def test_the_off_switch_runs_the_jit_kernels_and_builds_nothing(monkeypatch):
    monkeypatch.setenv(parmbe_aot.ENV, "0")
    monkeypatch.setattr(parmbe_aot, "_KERNELS", None)
    monkeypatch.setattr(parmbe_aot, "load", lambda *a: pytest.fail("loaded"))
    monkeypatch.setattr(parmbe_aot, "build", lambda *a: pytest.fail("built"))
    g = random_graph(np.random.default_rng(5), 8, 11, 0.4)
    res = parmbe.run_serial(g)
    assert res.stats["kernels"] == "jit"
    assert (res.count, res.fingerprint) == count_and_fingerprint(g)


def test_a_failed_build_is_said_once_and_the_jit_kernels_run(monkeypatch, tmp_path, capsys):
    """No C compiler, say: one line on stderr, a marker, and no second attempt (a later
    process would pay a failing build at every run)."""
    tries = tmp_path / "tries"
    fail = (f"import sys; open({str(tries)!r}, 'a').write('x'); "
            "print('cc: not found', file=sys.stderr); sys.exit(1)")
    monkeypatch.setattr(parmbe_aot, "cache_dir", lambda: tmp_path / "cache")
    monkeypatch.setattr(parmbe_aot, "module_name", lambda: "parmbe_aot_untried")
    monkeypatch.setattr(parmbe_aot, "_build_command", lambda name, out: [sys.executable, "-c",
                                                                           fail])
    for _ in range(2):
        monkeypatch.setattr(parmbe_aot, "_KERNELS", None)
        assert parmbe_aot.kernels().kind == "jit"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not build" in err[0] and "cc: not found" in err[0], err
    assert tries.read_text() == "x"
    assert list((tmp_path / "cache").glob("*.failed"))


def test_a_cache_folder_that_cannot_be_written_leaves_the_jit_kernels(monkeypatch, tmp_path,
                                                                     capsys):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setattr(parmbe_aot, "cache_dir", lambda: tmp_path / "a-file" / "cache")
    monkeypatch.setattr(parmbe_aot, "module_name", lambda: "parmbe_aot_unwritable")
    monkeypatch.setattr(parmbe_aot, "_KERNELS", None)
    assert parmbe_aot.kernels().kind == "jit"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "were not built" in err[0], err


BUILD_AT_ONCE = """
import sys
from pathlib import Path
from baselines import parmbe_aot
cache = Path(sys.argv[1])
parmbe_aot.cache_dir = lambda: cache
SLOW = ("import sys, time; from pathlib import Path; c = Path(sys.argv[1]) / 'count'; "
        "c.write_text(c.read_text() + 'x' if c.exists() else 'x'); time.sleep(0.5); "
        "(Path(sys.argv[2]) / sys.argv[3]).write_bytes(b'so')")
parmbe_aot._build_command = lambda name, out: [
    sys.executable, "-c", SLOW, str(cache), str(out), parmbe_aot.entry_path(name).name]
print(parmbe_aot.build("parmbe_aot_test"))
"""


def test_two_processes_building_at_once_build_once(tmp_path):
    """The second waits for the first's lock and finds its file; no temporary is left."""
    cache = tmp_path / "cache"
    procs = [subprocess.Popen([sys.executable, "-c", BUILD_AT_ONCE, str(cache)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    path = cache / ("parmbe_aot_test" + importlib.machinery.EXTENSION_SUFFIXES[0])
    assert [o.strip() for o, _ in outs] == [str(path)] * 2
    assert (cache / "count").read_text() == "x"
    assert sorted(p.name for p in cache.iterdir()) == sorted(
        ["count", path.name, "parmbe_aot_test.lock"])
