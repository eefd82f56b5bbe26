"""Ingest figures: parse speed on the mirror, peak memory per edge line, CSR digests.

    python benchmarks/ingest/bench_ingest.py speed [--repeats 7]
    python benchmarks/ingest/bench_ingest.py rss --lines 10000000 [--file /tmp/mbe-edges-10M.txt]
    python benchmarks/ingest/bench_ingest.py digests
    python benchmarks/ingest/bench_ingest.py ab --old /tmp/mbe-old/mbebench/konect.py

``speed``: median seconds of ``parse_edge_list`` on every ``out.*`` file of the
KONECT mirror (after one warm-up parse).  ``rss``: writes a KONECT edge list of
``--lines`` random edges (kept for reruns), then parses it (and, separately,
converts it to CSR) in a fresh interpreter; the peak RSS above that
interpreter's RSS after its imports, divided by the line count, is the cost
per edge line.  ``digests``: SHA-256 of the CSR that ``convert`` writes for
every mirror archive (the regression check that a parser change keeps the
output byte for byte).  ``ab``: this checkout's parser and another copy of
``konect.py`` (e.g. an older commit's) timed alternately on the same files, in
one process, so that both see the same machine load.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MIRROR = REPO.parent / "shared" / "konect-mirror"


def _mirror_archives(mirror: Path) -> dict[str, Path]:
    return {
        a.name[len("download.tsv.") : -len(".tar.bz2")]: a
        for a in sorted(mirror.glob("download.tsv.*.tar.bz2"))
    }


def speed(mirror: Path, repeats: int) -> None:
    from mbebench.konect import parse_edge_list

    with tempfile.TemporaryDirectory() as tmp:
        for name, arc in _mirror_archives(mirror).items():
            with tarfile.open(arc, "r:bz2") as tf:
                (m,) = [m for m in tf.getmembers() if Path(m.name).name.startswith("out.")]
                path = Path(tmp) / name
                path.write_bytes(tf.extractfile(m).read())
            el = parse_edge_list(path)
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                parse_edge_list(path)
                times.append(time.perf_counter() - t)
            print(f"{name:32s} {el.n_lines:>9d} lines  median {statistics.median(times):.4f} s"
                  f"  min {min(times):.4f} s")


def ab(mirror: Path, old_konect: Path, repeats: int, names: list[str]) -> None:
    import importlib.util

    from mbebench import konect as new

    spec = importlib.util.spec_from_file_location("old_konect", old_konect)
    old = importlib.util.module_from_spec(spec)
    sys.modules["old_konect"] = old  # dataclasses look their module up there
    spec.loader.exec_module(old)
    archives = _mirror_archives(mirror)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or archives:
            with tarfile.open(archives[name], "r:bz2") as tf:
                (m,) = [m for m in tf.getmembers() if Path(m.name).name.startswith("out.")]
                path = Path(tmp) / name
                path.write_bytes(tf.extractfile(m).read())
            times = {"old": [], "new": []}
            for i in range(repeats + 2):
                for label, mod in (("new", new), ("old", old)):
                    t = time.perf_counter()
                    mod.parse_edge_list(path)
                    if i >= 2:  # two warm-up rounds
                        times[label].append(time.perf_counter() - t)
            print(f"{name:28s}" + "".join(
                f"  {k} median {statistics.median(v):.4f} s min {min(v):.4f} s"
                for k, v in times.items()))


def write_edge_list(path: Path, lines: int) -> None:
    import numpy as np

    rng = np.random.default_rng(11)
    with open(path, "w") as f:
        f.write("% bip unweighted\n")
        step = 1_000_000
        for start in range(0, lines, step):
            n = min(step, lines - start)
            u = rng.integers(1, max(2, lines // 10), n)
            v = rng.integers(1, max(2, lines // 20), n)
            f.write("".join(f"{a}\t{b}\n" for a, b in zip(u.tolist(), v.tolist())))


# VmHWM is the peak RSS of this process's own memory map.  (ru_maxrss would
# not do: an exec'd child inherits its parent's peak, e.g. the generator's.)
_CHILD = r"""
import json, re, sys
from pathlib import Path
import numpy
from mbebench import convert, konect
def rss():
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024
base = rss()
path = Path(sys.argv[2])
if sys.argv[1] == "parse":
    lines = konect.parse_edge_list(path).n_lines
else:
    out = Path(sys.argv[3])
    lines = convert.convert("bench", out_csr=out / "g.csr", out_meta=out / "g.json",
                            edges=path)["n_lines"]
print(json.dumps({"base": base, "peak": rss(), "lines": lines}))
"""


def rss(lines: int, file: Path | None) -> None:
    import mbebench

    path = file or Path(f"/tmp/mbe-edges-{lines}.txt")
    if not path.exists():
        t = time.perf_counter()
        write_edge_list(path, lines)
        seconds = time.perf_counter() - t
        print(f"wrote {path} ({path.stat().st_size / 1e6:.0f} MB) in {seconds:.1f} s")
    for what in ("parse", "convert"):
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            # The child imports the same mbebench as this process.
            env = {**os.environ, "PYTHONPATH": str(Path(mbebench.__file__).parents[1])}
            res = subprocess.run(
                [sys.executable, "-c", _CHILD, what, str(path), out],
                check=True, capture_output=True, text=True, env=env,
            )
            seconds = time.perf_counter() - t
        r = json.loads(res.stdout)
        per_line = (r["peak"] - r["base"]) / r["lines"]
        print(f"{what:8s} {r['lines']} lines: peak RSS {r['peak'] / 2**20:.0f} MiB,"
              f" after imports {r['base'] / 2**20:.0f} MiB,"
              f" {per_line:.1f} bytes per edge line, {seconds:.1f} s")


def digests(mirror: Path) -> None:
    from mbebench.convert import convert

    with tempfile.TemporaryDirectory() as tmp:
        for name, arc in _mirror_archives(mirror).items():
            out = Path(tmp) / f"{name}.csr"
            convert(name, out_csr=out, out_meta=Path(tmp) / f"{name}.json", archive=arc)
            print(f'    "{name}": "{hashlib.sha256(out.read_bytes()).hexdigest()}",')


def main() -> None:
    import mbebench

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("what", choices=["speed", "rss", "digests", "ab"])
    p.add_argument("--mirror", type=Path, default=MIRROR)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--lines", type=int, default=10_000_000)
    p.add_argument("--file", type=Path)
    p.add_argument("--old", type=Path, help="the other konect.py, for ab")
    p.add_argument("names", nargs="*", help="mirror files for ab (default: all)")
    a = p.parse_intermixed_args()
    print(f"mbebench from {Path(mbebench.__file__).parent}")
    if a.what == "speed":
        speed(a.mirror, a.repeats)
    elif a.what == "rss":
        rss(a.lines, a.file)
    elif a.what == "ab":
        ab(a.mirror, a.old, a.repeats, a.names)
    else:
        digests(a.mirror)


if __name__ == "__main__":
    main()
