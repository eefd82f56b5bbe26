"""Two or more cuMBE builds on the same graphs, alternating, best of N (run on a GPU machine).

    python benchmarks/gpu/ab.py --build paper=--no-rounds --build rounds= \\
        --repeats 3 --out ab.jsonl GRAPH.csr [GRAPH.csr ...]

A build is a name and the options of ``python -m cumbe run`` that select it (``NAME=OPTIONS``;
empty: the default build, the cuMBE variant with the check in rounds; ``--no-rounds``: the
paper's check); ``--env NAME=VAR=VALUE`` also sets an environment
variable for that build's runs (a build switch such as ``CUMBE_MIN_BLOCKS``); ``--tree NAME=PATH``
runs that build from another checkout (``python -m cumbe`` there: an earlier commit's build, for
a before and after in one call; a ``PYTHONPATH`` would not do, ``-m`` puts the working
directory first).
Every build is compiled first (one untimed run on the first graph), then for
each graph the builds run one after another, ``--repeats`` times round, so that a drift of the
machine falls on every build alike.  Each run is ``python -m cumbe run GRAPH --json``; a row a
graph and build: its kernel times, the best, the count and the fingerprint, and whether the
counts and fingerprints of all builds agree (``agree``, on each build's last row of a graph).
A Markdown table goes to stdout (:func:`table`: each build against the first)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "scale"))

import scale  # noqa: E402  (its run of cumbe: timeouts, errors, the result's fields)


def parse_build(text: str) -> tuple[str, list[str]]:
    """``NAME=OPTIONS`` -> (name, the options as arguments)."""
    name, _, options = text.partition("=")
    return name, options.split()


def run(csr: Path, env: dict, extra: list[str], limit: float, tree: Path | None = None) -> dict:
    # the options of a build come last: a --variant among them wins over the default
    return scale.run_cumbe(csr, "cuMBE", limit, extra, env=env, tree=tree)


def table(rows: list[dict], names: list[str]) -> list[str]:
    """The Markdown table of ``rows`` (this script's rows, builds ``names``, the first the
    baseline): a graph a line, each build's best time, each other build's time over the
    first's, and whether the builds that finished agree on count and fingerprint (``NO``
    when two differ; how many did not finish, where some did not)."""
    others = names[1:]
    out = ["| graph | bicliques | " + " | ".join(f"{n} s" for n in names)
           + "".join(f" | {n} / {names[0]}" for n in others) + " | agree |",
           "|---|---:|" + "---:|" * (len(names) + len(others)) + "---|"]
    by = {(r["graph"], r["build"]): r for r in rows}
    for g in dict.fromkeys(r["graph"] for r in rows):
        mine = [by.get((g, n), {}) for n in names]
        t = [r.get("kernel_s") for r in mine]
        done = {(r["count"], r["fingerprint"]) for r in mine if r.get("count") is not None}
        counts = [c for c, _ in done]
        failed = sum(1 for r in mine if r.get("count") is None)
        agree = "NO" if len(done) > 1 else ("-" if not done else "yes")
        if failed and done:
            agree += f" ({failed} not finished)"
        ratios = [f"{x / t[0]:.3f}" if x and t[0] else "-" for x in t[1:]]
        out.append(f"| {g} | " + (f"{counts[0]:,}" if len(counts) == 1 else "-") + " | "
                   + " | ".join(f"{x:.4g}" if x else "-" for x in t)
                   + "".join(f" | {r}" for r in ratios) + f" | {agree} |")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="+", type=Path)
    ap.add_argument("--build", action="append", required=True, help="NAME=OPTIONS")
    ap.add_argument("--env", action="append", default=[], help="NAME=VAR=VALUE")
    ap.add_argument("--tree", action="append", default=[], help="NAME=PATH (another checkout)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--limit", type=float, default=300.0, help="seconds a run may take")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--label", default="", help="a tag written into every row")
    ap.add_argument("--run-args", default="", help="more options of every run, one string")
    a = ap.parse_args(argv)
    envs: dict[str, dict] = {}
    for e in a.env:
        name, _, pair = e.partition("=")
        var, _, value = pair.partition("=")
        envs.setdefault(name, {})[var] = value
    trees = {name: Path(path) for name, _, path in (t.partition("=") for t in a.tree)}
    builds = [(name, envs.get(name, {}), [*a.run_args.split(), *options], trees.get(name))
              for name, options in map(parse_build, a.build)]
    for name, env, extra, tree in builds:
        r = run(a.graphs[0], env, extra, 900.0, tree)
        print(f"# warm {name}: {r['status']}", file=sys.stderr)
    rows = []
    with a.out.open("a") as fh:
        for g in a.graphs:
            runs = {name: [] for name, *_ in builds}
            for _ in range(a.repeats):
                for name, env, extra, tree in builds:
                    runs[name].append(run(g, env, extra, a.limit, tree))
            last = {n: r[-1] for n, r in runs.items()}
            seen = {(r.get("count"), r.get("fingerprint")) for r in last.values()}
            agree = len(seen) == 1 and all(r["status"] == "ok" for r in last.values())
            for name, rs in runs.items():
                ok = [r for r in rs if r["status"] == "ok"]
                row = {"label": a.label, "graph": g.stem, "build": name,
                       "kernel_s_runs": [r["kernel_s"] for r in ok],
                       "kernel_s": min((r["kernel_s"] for r in ok), default=None),
                       "count": last[name].get("count"),
                       "fingerprint": last[name].get("fingerprint"), "agree": agree,
                       **({"error": rs[-1].get("error", rs[-1]["status"])}
                          if rs[-1]["status"] != "ok" else {})}
                rows.append(row)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
            best = {n: min((r["kernel_s"] for r in rs if r["status"] == "ok"), default=None)
                    for n, rs in runs.items()}
            print(f"# {g.stem}: " + ", ".join(f"{n} {t}" for n, t in best.items()),
                  file=sys.stderr)
    print("\n".join(table(rows, [n for n, *_ in builds])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
