"""What does one shard job cost beyond its work?  (issue 18 item 4)

    python benchmarks/shards/bench_overhead.py [--old DIR] [--rounds 5] [--engines imbea,parmbe]
    python3 benchmarks/shards/bench_overhead.py --engines cumbe --rounds 5   # on the GPU machine

Times the command the pipeline's rules run (``python -m mbebench run ...``, as
``run_engine`` and ``run_shards`` call it) on a tiny graph, from the outside (wall
seconds of the whole process, what ``/usr/bin/time`` reports), against the engine's
own seconds in the row it writes (``algo_s``: preparation and enumeration).  The
difference is the job's overhead: interpreter, imports, CSR read, JIT cache load, the
runner's child process, the ParMBE pool.  Prints a Markdown table.

* ``run``: one unsharded run (``run_engine``);
* ``1 shard/job``: one shard of 8 (``run_shards`` with ``shards_per_job: 1``);
* ``8 shards/job``: all 8 shards in one job (``shards_per_job: 8``), per shard.

``--old DIR``: also the ``run`` command of another source tree (e.g. ``git archive
e27ca60 | tar -x -C DIR``, before the runner's parent stopped importing numba).
The numba cache is warmed first: these are the figures of a job on a machine whose cache
is filled (a fresh cache adds the compile, once per machine).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
N = 8


def job(engine: str) -> str:
    sys.path.insert(0, str(REPO))
    from mbebench import plan

    params = {"processes": 1} if engine == "parmbe" else {}
    return json.dumps(plan.direct_run(engine, params, engine).job())


def timed(cmd: list[str], src: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the command, its children included: the CPU seconds do not
    grow when other work shares the machine, the wall seconds do."""
    # the tree first; what PYTHONPATH held already after it (the GPU machine's numpy wheel)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(src), os.environ.get(
        "PYTHONPATH", "")]))}
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=src, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--old", type=Path, help="another source tree: its run command too")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--engines", default="imbea,parmbe", help="comma list (cumbe: on a GPU)")
    a = ap.parse_args()
    load = os.getloadavg()[0]
    sys.path.insert(0, str(REPO))
    from mbebench.csr import from_edges, write_csr

    py = [sys.executable, "-m", "mbebench", "run", "--dataset", "tiny"]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        g = tmp / "tiny.csr"
        # the graph of Fig. 1 of the cuMBE paper's size: the work is nothing
        write_csr(from_edges([0, 0, 1, 1, 2, 2, 3], [0, 1, 1, 2, 2, 3, 3], 4, 4), g)
        for engine in a.engines.split(","):
            j = job(engine)
            base = [*py, "--run-id", engine, "--graph", str(g), "--job", j]
            kinds = {"run": (base + ["--out", str(tmp / "run.json")], REPO, 1)}
            if a.old:
                kinds["run (--old tree)"] = (base + ["--out", str(tmp / "old.json")],
                                             a.old.resolve(), 1)
            kinds["1 shard/job"] = (base + ["--out", str(tmp / "s1" / "job-0-of-8.json"),
                                            "--shards", "0", "--of", str(N)], REPO, 1)
            kinds[f"{N} shards/job"] = (base + ["--out", str(tmp / "s8" / "job-0-of-1.json"),
                                                "--shards", *map(str, range(N)), "--of",
                                                str(N)], REPO, N)
            timed(kinds["run"][0], REPO)  # warm the numba cache
            walls = {k: [] for k in kinds}
            cpus = {k: [] for k in kinds}
            algo = {k: [] for k in kinds}
            for _ in range(a.rounds):
                for k, (cmd, src, per) in kinds.items():
                    folder = Path(cmd[cmd.index("--out") + 1]).parent
                    folder.mkdir(exist_ok=True)
                    for f in folder.glob("shard-*.json"):  # a finished shard is not redone
                        f.unlink()
                    wall, cpu = timed(cmd, src)
                    walls[k].append(wall / per)
                    cpus[k].append(cpu / per)
                    if per == 1 and "--shards" not in cmd:
                        rows = [json.loads(Path(cmd[cmd.index("--out") + 1]).read_text())]
                    else:
                        rows = [json.loads(p.read_text()) for p in folder.glob("shard-*.json")]
                    algo[k].append(sum(r["algo_s_median"] for r in rows) / per)
            for k in kinds:
                w, e = statistics.median(walls[k]), statistics.median(algo[k])
                out[(engine, k)] = (w, statistics.median(cpus[k]), e, w - e)
    print(f"tiny graph (4 x 4, 7 edges), numba cache warm, median of {a.rounds} runs; "
          "seconds per run or shard\n")
    print(f"load average at the start: {load:.1f} on {os.cpu_count()} cores\n")
    print("| engine | job | wall s | CPU s | engine s (algo_s) | overhead s (wall - engine) |")
    print("|---|---|---:|---:|---:|---:|")
    for (engine, k), (w, c, e, o) in out.items():
        print(f"| {engine} | {k} | {w:.2f} | {c:.2f} | {e:.4f} | {o:.2f} |")


if __name__ == "__main__":
    main()
