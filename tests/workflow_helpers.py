"""Helpers of the pipeline tests: a temporary copy of the workflow, Snakemake in it,
and the brute-force reference counts of the shipped tiny graphs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from mbebench import csr, oracle

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"


def copy_workflow(dest: Path) -> Path:
    """Snakefile, workflow/, config/, .test/ and the example plug-ins under dest."""
    for item in ("Snakefile", "workflow", "config", ".test", "tests/plugins"):
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=shutil.ignore_patterns(
                "results", "resources", "logs", ".snakemake", "__pycache__"))
        else:
            shutil.copy2(src, dest / item)
    return dest


def snakemake(workdir: Path, *args: str, check=True, env=None) -> subprocess.CompletedProcess:
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--directory", ".test", *args],
        cwd=workdir, capture_output=True, text=True, timeout=2400, env=env,
    )
    if check and res.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}")
    return res


def edge_text(test_dir: Path, name: str, entry: dict) -> str:
    if "path" in entry:
        return (test_dir / entry["path"]).read_text()
    archive = test_dir / "konect" / f"download.tsv.{entry['konect']}.tar.bz2"
    with tarfile.open(archive) as tar:
        member = next(m for m in tar.getmembers() if Path(m.name).name.startswith("out."))
        return tar.extractfile(member).read().decode()


def reference(text: str):
    """Independent little parser: first two columns, ids remapped per side."""
    pairs = [tuple(int(x) for x in ln.split()[:2]) for ln in text.splitlines()
             if ln.strip() and not ln.startswith("%")]
    lefts = sorted({u for u, _ in pairs})
    rights = sorted({v for _, v in pairs})
    li = {u: i for i, u in enumerate(lefts)}
    ri = {v: i for i, v in enumerate(rights)}
    g = csr.from_edges([li[u] for u, _ in pairs], [ri[v] for _, v in pairs], len(lefts), len(rights))
    return g, oracle.count_and_fingerprint(g)


# Engines replaced inside the pipeline's processes (see fake_engine_env): the registered
# spec, with another function as its entry.
SITECUSTOMIZE = '''\
import os
_spec = os.environ.get("MBEBENCH_TEST_ENGINES")
if _spec:
    import dataclasses
    import sys
    import types

    from mbebench import engine as _engine

    _mod = sys.modules["mbe_test_specs"] = types.ModuleType("mbe_test_specs")
    for _item in _spec.split(","):
        _name, _target = _item.split("=", 1)
        setattr(_mod, _name, dataclasses.replace(_engine.get_spec(_name), entry=_target))
        _engine.ENGINES[_name] = f"mbe_test_specs:{_name}"
'''


def fake_engine_env(tmp: Path, engines: dict[str, str],
                    modules: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a Snakemake run whose engines ``engines`` (name -> module:function,
    e.g. ``imbea="fake_engines:shards_imbea"``) are replaced in every process it starts;
    ``modules``: more files (name -> source) for the same import path."""
    site = tmp / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    for name, text in (modules or {}).items():
        (site / name).write_text(text)
    path = os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")])
    spec = ",".join(f"{k}={v}" for k, v in engines.items())
    return {**os.environ, "PYTHONPATH": path, "MBEBENCH_TEST_ENGINES": spec}
