"""Same-machine A/B of the CPU engines' speed: two source trees, interleaved.

    python benchmarks/cpu/ab_engines.py --old /tmp/old --new . --repeats 7 \
        [--engines imbea,parmbe1] GRAPH.csr ... [--json OUT.json]

One worker process per tree (PYTHONPATH = the tree, so it runs that tree's
baselines/) stays up for the whole run; the parent asks them in turn for one
timed run of one engine on one graph, flipping which tree goes first on every
repeat, so that a machine that gets busier or quieter affects both alike.
Each run gives the engine's ``algo_seconds`` (wall) after its own warm-up and
its CPU seconds (``imbea``: ``baselines.imbea.run``, the calling thread's CPU
time; ``parmbe1``: ``baselines.parmbe.run`` with one worker process, the pool
started once per tree, the worker's CPU seconds inside tasks).  On a shared
machine the CPU seconds are the steadier figure: other processes lengthen the
wall time of a run, much less its CPU time.  Counts and fingerprints of
the two trees must agree on every run (exit status 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path


def worker() -> None:
    """Read 'ENGINE GRAPH' lines, answer one JSON line each."""
    from baselines import imbea, parmbe
    from mbebench.csr import read_csr

    print(json.dumps({"ready": imbea.__file__}), flush=True)
    pool = None
    graphs = {}
    for line in sys.stdin:
        engine, path = line.split()
        g = graphs.get(path) or graphs.setdefault(path, read_csr(path))
        c0 = time.thread_time()
        if engine == "imbea":
            r = imbea.run(g)
            cpu = time.thread_time() - c0
        elif engine == "parmbe1":
            pool = pool or parmbe.ParMBEPool(1)
            r = parmbe.run(g, processes=1, pool=pool)
            cpu = sum(r.stats["worker_cpu_s"])
        else:
            raise ValueError(f"unknown engine {engine!r}")
        out = {"count": int(r.count), "fingerprint": f"0x{int(r.fingerprint):016x}",
               "algo_s": r.algo_seconds, "cpu_s": cpu}  # fmt: skip
        print(json.dumps(out), flush=True)
    if pool is not None:
        pool.close()


def start(tree: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.Popen([sys.executable, __file__, "--worker"], cwd=tree, env=env, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    hello = json.loads(p.stdout.readline())
    if not hello["ready"].startswith(str(tree.resolve())):
        raise RuntimeError(f"{tree}: the worker imported {hello['ready']}")
    return p


def ask(p: subprocess.Popen, engine: str, graph: str) -> dict:
    p.stdin.write(f"{engine} {graph}\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def main(argv=None) -> int:
    if argv is None and sys.argv[1:] == ["--worker"]:
        worker()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, required=True)
    ap.add_argument("--engines", default="imbea,parmbe1")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    trees = {"old": a.old.resolve(), "new": a.new.resolve()}
    procs = {k: start(t) for k, t in trees.items()}
    engines = a.engines.split(",")
    graphs = [str(Path(g).resolve()) for g in a.graphs]
    times = {(e, g, k, m): [] for e in engines for g in graphs for k in trees
             for m in ("algo_s", "cpu_s")}  # fmt: skip
    bad = 0
    for e in engines:  # one untimed run per tree and graph: JIT and pool warm
        for g in graphs:
            for k in trees:
                ask(procs[k], e, g)
    for rep in range(a.repeats):
        order = ["old", "new"] if rep % 2 == 0 else ["new", "old"]
        for e in engines:
            for g in graphs:
                got = {k: ask(procs[k], e, g) for k in order}
                for k in order:
                    for m in ("algo_s", "cpu_s"):
                        times[(e, g, k, m)].append(got[k][m])
                same = (got["old"]["count"], got["old"]["fingerprint"]) == (
                    got["new"]["count"], got["new"]["fingerprint"])  # fmt: skip
                bad += not same
                print(rep, e, Path(g).stem, got["old"]["count"], got["old"]["fingerprint"],
                      *(f"{k}={got[k]['algo_s']:.4f}s/{got[k]['cpu_s']:.4f}cpu" for k in order),
                      "" if same else "DISAGREE", flush=True)  # fmt: skip
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print("\n| engine | graph | measure | old median s | new median s | new / old | old min | "
          "new min | new / old (min) |")  # fmt: skip
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    rows = []
    for e in engines:
        for g in graphs:
            rows.append({"engine": e, "graph": Path(g).stem})
            for m in ("algo_s", "cpu_s"):
                o, n = times[(e, g, "old", m)], times[(e, g, "new", m)]
                rows[-1].update({f"old_{m}": o, f"new_{m}": n})
                mo, mn = statistics.median(o), statistics.median(n)
                print(f"| {e} | {Path(g).stem} | {m} | {mo:.4f} | {mn:.4f} | {mn / mo:.3f} | "
                      f"{min(o):.4f} | {min(n):.4f} | {min(n) / min(o):.3f} |")  # fmt: skip
    if a.json:
        rec = {"command": " ".join([Path(sys.executable).name] + sys.argv),
               "trees": {k: str(t) for k, t in trees.items()}, "repeats": a.repeats,
               "host": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                        "load_end": os.getloadavg()},
               "rows": rows, "agree": bad == 0}  # fmt: skip
        a.json.write_text(json.dumps(rec, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
