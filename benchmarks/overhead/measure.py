"""Seconds beside the algorithm: one ``python -m cumbe run`` around its kernel, and one
ParMBE call around its algorithm, in one or more checkouts, on the same machine.

    python benchmarks/overhead/measure.py --tree before=/path/to/old/checkout --tree after=. \
        --graph results/csr/Marvel.csr --standin DBLP-author:0.8 --parmbe 16 --out overhead.json

``--tree NAME=PATH:VAR=VALUE,VAR=VALUE`` runs that checkout with those environment
variables: ``numba=.:MBEBENCH_FAST_LAUNCH=0,MBEBENCH_BENCH_FORKSERVER=1`` is this checkout
on its earlier paths (cuMBE's kernel through numba, ParMBE's workers from a forkserver).

Per checkout and graph, ``python -m cumbe run GRAPH --json ...`` runs ``--runs`` times in a
fresh process each (the first fills numba's cache and the preparation's cache; the last is
the one reported, a warm run).  Each process is timed from its spawn to its exit
(``wall``); where the checkout records them (``main_s``, ``stats.host_s`` in the JSON), it
is split into the interpreter's start and exit, imports and the graph, the run's host
steps, the kernel's load (``compile_s``) and the kernel.  ``--standin NAME:SCALE`` generates
a stand-in (``benchmarks/standins.py``, seed 1) into ``--work`` first.  ``--parmbe P``: per
checkout and graph, ``baselines.parmbe.run(graph, processes=P)`` in a fresh process,
``--runs`` times; the call's wall minus its ``algo_seconds`` (the pool's start, the
planning kernels' load, the pool's end) of the last process is reported.

Prints a Markdown table and writes every measurement to ``--out`` (JSON); exits 1 when two
checkouts disagree on a graph's count or fingerprint, or when a
warm cuMBE run of a checkout without ``MBEBENCH_FAST_LAUNCH=0`` that records its launch path
did not launch its cached cubin.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PARMBE_PROBE = """
import json, os, sys, time
def main():
    from baselines import parmbe, parmbe_pool
    if os.environ.get("MBEBENCH_BENCH_FORKSERVER") == "1":  # the earlier start: a forkserver
        parmbe_pool.fork_safe = lambda: False
    from mbebench.csr import read_csr
    graph = read_csr(sys.argv[1])
    t0 = time.perf_counter()
    r = parmbe.run(graph, processes=int(sys.argv[3]))
    wall = time.perf_counter() - t0
    with open(sys.argv[2], "w") as f:
        json.dump({"wall_s": wall, "algo_s": r.algo_seconds, "count": r.count,
                   "fingerprint": r.fingerprint, "start_method": r.stats.get("start_method"),
                   "pool_start_s": r.stats.get("pool_start_s"),
                   "kernels": r.stats.get("kernels"),
                   "compile_s": r.compile_seconds}, f)
if __name__ == "__main__":
    main()
"""


def _env(tree: Path, extra: dict | None = None) -> dict:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [env.get("PYTHONPATH")])])
    return env


def parse_tree(spec: str) -> tuple[str, Path, dict]:
    """``NAME=PATH[:VAR=VALUE,...]`` -> (name, path, environment)."""
    name, rest = spec.split("=", 1)
    path, _, env = rest.partition(":")
    return name, Path(path).resolve(), dict(kv.split("=", 1) for kv in env.split(",") if kv)


def cumbe_once(tree: Path, graph: Path, tmp: Path, env: dict | None = None) -> dict:
    out = tmp / f"cumbe-{time.monotonic_ns()}.json"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cumbe", "run", str(graph), "--json", str(out)],
                          cwd=tree, env=_env(tree, env), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"{tree}: cumbe run {graph} failed: {proc.stderr[-2000:]}")
    res = json.loads(out.read_text())
    stats = res["stats"]
    main_s = res.get("main_s")  # (older checkouts do not record it)
    return {
        "engine": "cumbe", "count": res["count"], "fingerprint": res.get("fingerprint"),
        "launch": stats.get("launch"), "wall_s": wall, "kernel_s": res["kernel_s"],
        "beside_s": wall - res["kernel_s"], "compile_s": res["compile_s"], "main_s": main_s,
        "outside_main_s": None if main_s is None else wall - main_s,
        "host_s": stats.get("host_s"),
        "setup_s": stats.get("setup_s"), "prepare_s": stats.get("prepare_s"),
        "blocks": stats.get("blocks"), "device": stats.get("device"),
    }


def parmbe_once(tree: Path, graph: Path, processes: int, tmp: Path,
                env: dict | None = None) -> dict:
    out = tmp / f"parmbe-{time.monotonic_ns()}.json"
    script = tmp / "parmbe_probe.py"  # a file: the pool's workers import the main module
    script.write_text(PARMBE_PROBE)
    proc = subprocess.run([sys.executable, str(script), str(graph), str(out), str(processes)],
                          cwd=tree, env=_env(tree, env), capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        raise RuntimeError(f"{tree}: parmbe {graph} failed: {proc.stderr[-2000:]}")
    res = json.loads(out.read_text())
    return {"engine": f"parmbe-{processes}", **res, "beside_s": res["wall_s"] - res["algo_s"]}


def standin(spec: str, work: Path) -> Path:
    name, scale = spec.split(":")
    out = work / "standins"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "standins.py"), "--preset", name,
                    "--seed", "1", "--scale", scale, "--out", str(out)], check=True,
                   env=_env(REPO))
    return next(out.glob(f"{name}-s1-x{float(scale)}*.csr"))


def table(rows: list[dict]) -> str:
    lines = ["| graph | engine | checkout | path | wall s | algorithm s | beside s | split (s) |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        if r["engine"] == "cumbe":
            parts = [f"compile/load {r['compile_s']:.2f}"]
            if r.get("main_s") is not None:
                run_s = r["kernel_s"] + r["compile_s"] + sum((r["host_s"] or {}).values())
                parts = [f"interpreter start+exit {r['outside_main_s']:.2f}",
                         f"imports+graph {r['main_s'] - run_s:.2f}", *parts]
            if r.get("host_s"):
                parts += [f"{k} {v:.2f}" for k, v in r["host_s"].items() if v >= 0.01]
            algo, path = r["kernel_s"], r.get("launch") or "?"
        else:
            parts = [f"pool start {r['pool_start_s']:.2f}"]
            algo, path = r["algo_s"], r.get("start_method") or "?"
            if r.get("kernels"):  # baselines.parmbe_aot: "aot" or numba's "jit"
                path += f", {r['kernels']}"
        lines.append(f"| {r['graph']} | {r['engine']} | {r['tree']} | {path} | {r['wall_s']:.2f} | "
                     f"{algo:.3f} | **{r['beside_s']:.2f}** | {', '.join(parts)} |")
    return "\n".join(lines)


def problems(rows: list[dict], envs: dict) -> list[str]:
    """Disagreements between checkouts on a result, and warm runs that missed the cubin."""
    out, seen = [], {}
    for r in rows:
        result = (r["count"], r.get("fingerprint"))
        first = seen.setdefault((r["graph"], r["engine"]), (r["tree"], result))
        if result != first[1]:
            out.append(f"{r['graph']} {r['engine']}: {r['tree']} gives {result}, "
                       f"{first[0]} {first[1]}")
        fast = envs[r["tree"]].get("MBEBENCH_FAST_LAUNCH", "1") != "0"
        if r["engine"] == "cumbe" and fast and r.get("launch") not in (None, "cubin"):
            out.append(f"{r['graph']}: the warm run of {r['tree']} did not launch its cubin")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=PATH[:VAR=V,...]",
                    help="a checkout to time, with environment variables (repeat for several)")
    ap.add_argument("--graph", action="append", default=[], help="a CSR file (repeatable)")
    ap.add_argument("--standin", action="append", default=[], metavar="PRESET:SCALE")
    ap.add_argument("--parmbe", type=int, default=0, metavar="P",
                    help="also time ParMBE with P processes (on the --parmbe-graph files)")
    ap.add_argument("--parmbe-graph", action="append", default=[])
    ap.add_argument("--runs", type=int, default=2, help="processes per case; the last counts")
    ap.add_argument("--work", default=tempfile.gettempdir())
    ap.add_argument("--out", default="overhead.json")
    a = ap.parse_args()
    trees = [parse_tree(t) for t in a.tree]
    envs = {name: env for name, _, env in trees}
    work = Path(a.work)
    graphs = [Path(g).resolve() for g in a.graph] + [standin(s, work) for s in a.standin]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for graph in graphs:
            for name, tree, env in trees:
                runs = [cumbe_once(tree, graph, Path(tmp), env) for _ in range(a.runs)]
                rows.append({"graph": graph.stem, "tree": name, **runs[-1], "all_runs": runs})
                print(json.dumps({k: rows[-1][k] for k in ("graph", "tree", "wall_s",
                                                           "kernel_s", "beside_s")}), flush=True)
        for graph in map(Path, a.parmbe_graph if a.parmbe else []):
            for name, tree, env in trees:
                runs = [parmbe_once(tree, graph.resolve(), a.parmbe, Path(tmp), env)
                        for _ in range(a.runs)]
                rows.append({"graph": graph.stem, "tree": name, **runs[-1], "all_runs": runs})
                print(json.dumps({k: rows[-1][k] for k in ("graph", "tree", "wall_s", "algo_s",
                                                           "beside_s")}), flush=True)
    Path(a.out).write_text(json.dumps(rows, indent=1))
    print(table(rows))
    bad = problems(rows, envs)
    for line in bad:
        print(f"PROBLEM: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
