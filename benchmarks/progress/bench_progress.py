"""Do the progress lines keep their promise?  Cadence and ETA error against the truth.

For each engine and mirror graph, one run in a child process with lines every
``--interval`` seconds (MBEBENCH_PROGRESS_S).  The child wraps the run in a runner-like
repeat (:func:`mbebench.progress.repeat`), so the lines count from the run's start, and
prints when the search started and ended on the same clock.  From its lines this script
measures:

* cadence: when the first line came and the longest gap between two (the promise: the first
  by one interval, none more than 1.2 intervals apart);
* ETA: for every line after 20 % of the search's time, the ETA against the true time left
  (the search's end minus the line's time): ``ratio`` = max(ETA/true, true/ETA), the bar
  being 2; lines with ``ETA ? s`` count as "no ETA", which the bar allows.

cuMBE runs only where a CUDA device is found (``--engines cumbe``).

    python benchmarks/progress/bench_progress.py --cache /tmp/progress-cache \
        --json benchmarks/progress/results/latest.jsonl

The mirror graphs are converted once into ``--cache`` (benchmarks/mirror.py); stand-ins
(benchmarks/standins.py) are given as ``--graph NAME=PATH`` and named in ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

from mirror import DEFAULT_MIRROR, cached_csr, mirror_datasets  # noqa: E402

LINE = re.compile(r"^(?P<engine>[\w.+-]+) progress: .* \| repeat \d+/\d+ \| shard \S+ \| "
                  r"\S+ \+(?P<elapsed>[\d.]+) s \| (?P<body>.*)$")
ETA = re.compile(r"ETA (?:(?P<mid>[\d.]+) s(?: \((?P<low>[\d.]+)-(?P<high>[\d.]+) s\))?|\? s)")
DEFAULT_RUNS = ("imbea:YouTube", "imbea:movielens-u-i", "parmbe:YouTube",
                "parmbe:movielens-u-i", "parmbe:movielens-t-i")

CHILD = """
import sys, json
from mbebench import progress
from mbebench.csr import read_csr
engine, graph_path, processes = sys.argv[1], sys.argv[2], int(sys.argv[3])
graph = read_csr(graph_path)
if engine == "imbea":
    from baselines.imbea import run
    call = lambda: run(graph, side="auto")
elif engine == "parmbe":
    from baselines.parmbe import run
    call = lambda: run(graph, processes=processes)
else:
    from cumbe.engine import run
    call = lambda: run(graph)
with progress.repeat(engine, 1, 1) as rep:
    result = call()
print("RESULT " + json.dumps({
    "count": int(result.count), "algo_s": result.algo_seconds,
    "work_start_s": rep.t_work - rep.t0,
    "work_end_s": (rep.t_work_end if rep.t_work_end is not None else rep.clock()) - rep.t0,
}), file=sys.stderr, flush=True)
"""


def one_run(engine: str, graph: Path, interval: float, processes: int, timeout: float,
            logs: Path | None = None) -> dict:
    env = {**os.environ, "MBEBENCH_PROGRESS_S": str(interval),
           "MBEBENCH_PROGRESS_LABEL": graph.stem,
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", CHILD, engine, str(graph), str(processes)],
                         capture_output=True, text=True, env=env, timeout=timeout)
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{engine}-{graph.stem}.log").write_text(out.stderr)
    result = None
    lines = []
    for ln in out.stderr.splitlines():
        if ln.startswith("RESULT "):
            result = json.loads(ln[7:])
        elif (m := LINE.match(ln)) is not None:
            lines.append((float(m["elapsed"]), m["body"]))
    if out.returncode != 0 or result is None:
        raise RuntimeError(f"{engine} on {graph.name} failed:\n{out.stderr[-2000:]}")
    return {"lines": lines, **result}


def measure(run: dict, interval: float) -> dict:
    """Cadence and ETA error of one run's lines."""
    stamps = [t for t, _ in run["lines"]]
    start, end = run["work_start_s"], run["work_end_s"]
    span = max(end - start, 1e-9)
    ratios, unknown, shown = [], 0, []
    for t, body in run["lines"]:
        if (t - start) / span < 0.2 or t > end:
            continue
        m = ETA.search(body)
        if m is None:
            continue
        if m["mid"] is None:
            unknown += 1
            continue
        eta, true = float(m["mid"]), end - t
        ratio = max(eta / true, true / eta) if eta > 0 and true > 0 else float("inf")
        ratios.append(ratio)
        shown.append({"at_s": t, "eta_s": eta, "true_s": round(true, 3), "ratio": ratio,
                      "low_s": float(m["low"] or eta), "high_s": float(m["high"] or eta)})
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    return {
        "run_s": round(end, 3), "search_s": round(span, 3), "lines": len(stamps),
        "first_line_s": stamps[0] if stamps else None,
        "max_gap_s": round(max(gaps), 3) if gaps else None,
        "cadence_ok": bool(stamps) and stamps[0] <= interval * 1.2 and (
            not gaps or max(gaps) <= interval * 1.2) or end < interval,
        "eta_lines_after_20pct": len(ratios), "no_eta_lines_after_20pct": unknown,
        "worst_eta_ratio": round(max(ratios), 3) if ratios else None,
        "eta_within_2x": all(r <= 2.0 for r in ratios),
        "etas": shown,
        "stamps": stamps,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR)
    ap.add_argument("--cache", type=Path, required=True, help="CSR files of the mirror graphs")
    ap.add_argument("--runs", default=",".join(DEFAULT_RUNS),
                    help="engine:dataset pairs, comma-separated (engines: imbea, parmbe, cumbe)")
    ap.add_argument("--graph", action="append", default=[], metavar="NAME=PATH",
                    help="a CSR file (e.g. a stand-in, benchmarks/standins.py) that --runs may "
                         "name as NAME; repeatable")
    ap.add_argument("--interval", type=float, default=1.0,
                    help="MBEBENCH_PROGRESS_S of the runs (seconds; small, for many lines)")
    ap.add_argument("--processes", type=int, default=2, help="ParMBE's processes")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--json", type=Path, help="append one JSON row per run")
    ap.add_argument("--logs", type=Path, help="keep each run's log (its lines) in this folder")
    a = ap.parse_args(argv)
    datasets = mirror_datasets(a.mirror)
    runs = [r.split(":", 1) for r in a.runs.split(",") if r.strip()]
    extra = {n: Path(p) for n, p in (g.split("=", 1) for g in a.graph)}
    if any(e == "cumbe" for e, _ in runs):
        try:
            from numba import cuda

            has_gpu = cuda.is_available()
        except Exception:  # noqa: BLE001 - no numba-cuda: no GPU here
            has_gpu = False
        if not has_gpu:
            print("no CUDA device: cuMBE not measured", file=sys.stderr)
            runs = [(e, d) for e, d in runs if e != "cumbe"]
    print("| engine | dataset | run s | search s | lines | first line s | max gap s | "
          "ETA lines after 20 % | no ETA | worst ETA ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for engine, name in runs:
        graph = (extra[name] if name in extra
                 else cached_csr(name, datasets[name], a.mirror, a.cache))
        run = one_run(engine, graph, a.interval, a.processes, a.timeout, a.logs)
        m = measure(run, a.interval)
        row = {"engine": engine, "dataset": name, "interval_s": a.interval,
               "processes": a.processes if engine == "parmbe" else None,
               "count": run["count"], "algo_s": run["algo_s"], **m,
               "host": platform.node(), "cpu": platform.processor() or platform.machine(),
               "date": time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())}
        worst = "-" if m["worst_eta_ratio"] is None else f"{m['worst_eta_ratio']:.2f}"
        print(f"| {engine} | {name} | {m['run_s']:.1f} | {m['search_s']:.1f} | {m['lines']} | "
              f"{m['first_line_s']} | {m['max_gap_s']} | {m['eta_lines_after_20pct']} | "
              f"{m['no_eta_lines_after_20pct']} | {worst} |", flush=True)
        if a.json:
            a.json.parent.mkdir(parents=True, exist_ok=True)
            with open(a.json, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
