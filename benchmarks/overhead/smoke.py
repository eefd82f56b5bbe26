"""cuMBE's launch from a cached cubin (cumbe/cubin.py) on a GPU, against numba's launch.

    python benchmarks/overhead/smoke.py GRAPH.csr [GRAPH.csr ...] [--variants cuMBE noRS noES noWS]

Per graph and variant, in a fresh cubin cache (a temporary ``MBEBENCH_CUBIN_CACHE``), three
processes of ``python -m cumbe run``: cold (no cubin: numba compiles or loads the kernel and
stores its cubin), warm (the cubin through the driver API) and numba's path
(``MBEBENCH_FAST_LAUNCH=0``).  All three must give the same count and fingerprint, the cold
and numba runs must record ``launch: numba`` and the warm one ``launch: cubin``; for noWS
(no stealing, so no run-to-run variation) the nodes and tasks visited must agree too.  One
more warm run with ``--instrument`` checks that build's path.  Prints a table of the wall
seconds; exits 1 on any disagreement.
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

REPO = Path(__file__).resolve().parents[2]
SAME = ("count", "fingerprint")
SAME_STATS = ("n_tasks", "blocks", "layout", "arena_words_per_warp", "memory_bytes")
SAME_NOWS = ("nodes", "tasks_run", "block_tasks_run")


def cumbe(graph: Path, out: Path, env: dict, *args: str) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "cumbe", "run", str(graph), "--json", str(out),
                        *args], cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"cumbe run {graph} {' '.join(args)} failed ({p.returncode}): "
                         f"{p.stderr[-2000:]}")
    res = json.loads(out.read_text())
    res["wall_s"], res["stderr"] = wall, p.stderr
    return res


def check(name: str, runs: dict, variant: str) -> list[str]:
    bad = []
    ref = runs["numba"]
    for label, r in runs.items():
        want = "cubin" if label.startswith("warm") else "numba"
        if r["stats"].get("launch") != want:
            bad.append(f"{name} {label}: launch {r['stats'].get('launch')}, not {want} "
                       f"(stderr: {r['stderr'][-500:]!r})")
        keys = [(k, r[k], ref[k]) for k in SAME]
        stats = SAME_STATS + (SAME_NOWS if variant == "noWS" else ())
        keys += [(k, r["stats"].get(k), ref["stats"].get(k)) for k in stats
                 if label != "warm-instrument"]
        bad += [f"{name} {label}: {k} {a} != numba's {b}" for k, a, b in keys if a != b]
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", nargs="+")
    ap.add_argument("--variants", nargs="+", default=["cuMBE", "noRS", "noES", "noWS"])
    a = ap.parse_args()
    bad, lines = [], ["| graph | variant | cold s | warm s | numba s | warm kernel s | "
                      "numba kernel s |", "|---|---|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
        base = {**os.environ, "PYTHONPATH": path, "MBEBENCH_CUBIN_CACHE": f"{tmp}/cubins",
                "MBEBENCH_FAST_LAUNCH_VERBOSE": "1"}
        base.pop("MBEBENCH_FAST_LAUNCH", None)
        for g in map(Path, a.graph):
            for v in a.variants:
                out = Path(tmp) / f"{g.stem}-{v}.json"
                runs = {"cold": cumbe(g, out, base, "--variant", v),
                        "warm": cumbe(g, out, base, "--variant", v),
                        "numba": cumbe(g, out, {**base, "MBEBENCH_FAST_LAUNCH": "0"},
                                       "--variant", v)}
                if v == a.variants[0]:
                    cumbe(g, out, base, "--variant", v, "--instrument")  # stores its cubin
                    runs["warm-instrument"] = cumbe(g, out, base, "--variant", v,
                                                    "--instrument")
                bad += check(f"{g.stem} {v}", runs, v)
                lines.append(f"| {g.stem} | {v} | {runs['cold']['wall_s']:.2f} | "
                             f"{runs['warm']['wall_s']:.2f} | {runs['numba']['wall_s']:.2f} | "
                             f"{runs['warm']['kernel_s']:.4f} | {runs['numba']['kernel_s']:.4f} |")
                print(lines[-1], flush=True)
    print("\n".join(lines))
    for line in bad:
        print(f"PROBLEM: {line}", file=sys.stderr)
    print("ok" if not bad else f"{len(bad)} problems", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
