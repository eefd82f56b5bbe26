"""cuMBE under device-memory caps: the same graph at every cap must give the same count and
fingerprint as uncapped, never crash, and stay close in time.  GPU machine only:

    python benchmarks/memory-caps/sweep.py --out DIR [--mirror .csr/*.csr]
        [--standins PRESET,...|all] [--seeds 1,2,3] [--scale 0.1] [--paper-sized PRESET,...]
        [--caps smallest,smallest*2,0.25,0.5,1,2,8,none] [--repeats 3] [--budget 540]
        [--run-limit 60] [--root .old]

Stand-ins are generated here (in parallel, before any GPU run) with benchmarks/standins.py.
Every graph runs uncapped first (the reference), then at each cap; ``smallest`` is the
smallest cap with which the graph fits (:func:`cumbe.engine.smallest_memory_gib`, rounded
up to 0.001 GiB), ``smallest*F`` F times that (how fast the run gets as memory grows from
it).  The runs happen in one worker process per batch: a kernel fault leaves the CUDA context
unusable, so the parent records the run the worker died in as ``crash``
(with its last line of output) and starts a new worker at the next run; a run past
``--run-limit`` seconds is killed and recorded as ``timeout``.  ``--root DIR`` runs
the engine of another checkout (a ``git archive`` of an older commit) for before/after.

Writes ``DIR/runs.jsonl`` (one line per run: graph, cap, status, count, fingerprint, kernel
seconds (best of the repeats), blocks, block-wide tasks, arena words, grid reason, bytes,
task layout, host set-up seconds) and
``DIR/summary.md`` (per graph: time at each cap over uncapped, identical or not), and prints
the summary last.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CAPS = "smallest,0.25,0.5,1,2,8,none"
# the bars (time at a cap over uncapped)
BARS = {"8": 1.1, "1": 1.5, "smallest": 3.0}


def _gen(args) -> tuple[str | None, str]:
    """(the CSR path, "") or (None, why): a preset that cannot be made at this scale (planted
    blocks with more edges than the graph) is left out, not the whole sweep."""
    preset, seed, scale, out = args
    sys.path.insert(0, str(REPO / "benchmarks"))
    import standins

    try:
        p = standins.preset_params(preset, seed, scale)
        path = Path(out) / f"{standins.file_stem(p)}.csr"
        if not path.exists():
            standins.write(p, Path(out))
    except ValueError as e:
        return None, f"{preset} seed {seed} x{scale:g}: not generated: {e}"
    return str(path), ""


def generate(specs, out: Path, jobs: int) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(jobs) as ex:
        made = list(ex.map(_gen, [(p, s, x, str(out)) for p, s, x in specs]))
    for _, why in made:
        if why:
            print(why, flush=True)
    return [path for path, _ in made if path]


# ------------------------------------------------------------------ worker (one process)

def worker(jobs_file: str, start: int, out_file: str, root: str) -> int:
    sys.path.insert(0, root)
    import warnings

    warnings.simplefilter("ignore")
    from cumbe import engine as E
    from mbebench.csr import read_csr
    from mbebench.fingerprint import to_hex

    jobs = [json.loads(x) for x in Path(jobs_file).read_text().splitlines()]
    graphs: dict = {}
    with open(out_file, "a") as out:
        for i in range(start, len(jobs)):
            job = jobs[i]
            print(f"START {i}", flush=True)
            g = graphs.get(job["graph"])
            if g is None:
                graphs.clear()
                g = graphs[job["graph"]] = read_csr(job["graph"])
            cap = job["cap_gib"]
            rec = dict(job, index=i)
            times = []
            try:
                for _ in range(job["repeats"]):
                    r = E.run(g, variant=job["variant"], device_memory_gib=cap,
                              **({"rounds": True} if job.get("rounds") else {}))
                    times.append(r.algo_seconds)
                    if r.algo_seconds > 2.0:
                        break
                st = r.stats
                rec.update(status="ok", count=r.count, fingerprint=to_hex(r.fingerprint),
                           kernel_s=min(times), kernel_all_s=times, blocks=st.get("blocks"),
                           block_tasks=st.get("block_tasks"),
                           arena_words=st.get("arena_words_per_warp"),
                           grid_reason=st.get("grid_reason"), bytes=st.get("memory_bytes"),
                           max_task_words=st.get("max_task_words"), layout=st.get("layout"),
                           setup_s=st.get("setup_s"))
            except MemoryError as e:  # DeviceMemoryError: a clear refusal, not a crash
                rec.update(status="does-not-fit", message=str(e))
            except Exception as e:  # noqa: BLE001  anything else is a finding
                rec.update(status="error", message=f"{type(e).__name__}: {e}")
            out.write(json.dumps(rec) + "\n")
            out.flush()
            if rec["status"] == "error" and "unusable" in rec.get("message", ""):
                return 3  # the context is gone: the parent starts a new worker
    return 0


# ------------------------------------------------------------------ parent

def smallest_caps(paths, variant, root=str(REPO)) -> dict:
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]);"
        "from cumbe.engine import smallest_memory_gib; from mbebench.csr import read_csr;"
        "print(json.dumps({p: smallest_memory_gib(read_csr(p), sys.argv[2]) for p in sys.argv[3:]}))"
    )
    r = subprocess.run([sys.executable, "-c", code, root, variant, *paths], capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


def run_jobs(jobs, out_dir: Path, root: str, budget: float, run_limit: float) -> list[dict]:
    """Run ``jobs`` in worker processes; a job past ``run_limit`` seconds (the kernel cannot
    be interrupted) kills its worker and is recorded as ``timeout``."""
    import queue
    import threading

    jobs_file = out_dir / "jobs.jsonl"
    jobs_file.write_text("".join(json.dumps(j) + "\n" for j in jobs))
    runs_file = out_dir / "runs.jsonl"
    runs_file.unlink(missing_ok=True)
    t0 = time.time()

    def record(i, status, message):
        with open(runs_file, "a") as f:
            f.write(json.dumps(dict(jobs[i], index=i, status=status, message=message[:400]))
                    + "\n")

    start = 0
    while start < len(jobs):
        if time.time() - t0 > budget:
            for i in range(start, len(jobs)):
                record(i, "not-run", "the sweep's time budget ran out")
            break
        p = subprocess.Popen([sys.executable, __file__, "--worker", str(jobs_file), str(start),
                              str(runs_file), root], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in p.stdout], daemon=True).start()
        err: list = []
        threading.Thread(target=lambda: err.extend(p.stderr), daemon=True).start()
        cur, since, killed = start, time.time(), None
        while True:
            try:
                x = lines.get(timeout=0.5)
                if x.startswith("START "):
                    cur, since = int(x.split()[1]), time.time()
                continue
            except queue.Empty:
                pass
            if p.poll() is not None and lines.empty():
                break
            if time.time() - since > run_limit:
                killed = "timeout"
            elif time.time() - t0 > budget:
                killed = "not-run"
            if killed:
                p.kill()
                p.wait()
                break
        done = {json.loads(x)["index"] for x in runs_file.read_text().splitlines()} \
            if runs_file.exists() else set()
        if killed:
            record(cur, killed, f"over {run_limit:.0f} s, worker killed" if killed == "timeout"
                   else "the sweep's time budget ran out")
        elif p.returncode == 0 and cur in done:
            break
        elif cur not in done:
            record(cur, "crash", (("".join(err).strip().splitlines()) or
                                  [f"exit {p.returncode}"])[-1])
        start = cur + 1
    return [json.loads(x) for x in runs_file.read_text().splitlines()] if runs_file.exists() \
        else []


def cap_gib(cap: str, smallest: float) -> float | None:
    """GiB of a ``--caps`` entry: ``none`` -> None (uncapped), ``smallest`` or ``smallest*F``
    -> the graph's smallest cap (times F, rounded up to 0.001), else the number."""
    if cap == "none":
        return None
    if cap == "smallest":
        return smallest
    if cap.startswith("smallest*"):
        return math.ceil(smallest * float(cap[len("smallest*"):]) * 1000) / 1000
    return float(cap)


def summarise(runs: list[dict]) -> str:
    by_graph: dict = {}
    for r in runs:
        by_graph.setdefault(r["name"], {})[r["cap"]] = r
    caps = []
    for r in runs:
        if r["cap"] not in caps:
            caps.append(r["cap"])
    head = ["graph", "|E|", "smallest GiB", "uncapped s"] + [f"{c}" for c in caps if c != "none"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    verdict = {"runs": 0, "ok": 0, "identical": 0, "crash": 0, "error": 0, "does-not-fit": 0,
               "bars_missed": []}
    for name, rs in by_graph.items():
        ref = rs.get("none")
        cells = [name, str(next(iter(rs.values())).get("n_edges", "")),
                 f"{next(iter(rs.values())).get('smallest_gib', float('nan')):.3f}",
                 f"{ref['kernel_s']:.4f}" if ref and ref.get("status") == "ok" else
                 (ref or {}).get("status", "-")]
        for c in caps:
            if c == "none":
                continue
            r = rs.get(c)
            if r is None:
                cells.append("-")
                continue
            verdict["runs"] += 1
            verdict[r["status"]] = verdict.get(r["status"], 0) + 1
            if r["status"] != "ok":
                cells.append(r["status"])
                continue
            same = ref is not None and ref.get("status") == "ok" and (
                r["count"], r["fingerprint"]) == (ref["count"], ref["fingerprint"])
            verdict["identical"] += same
            ratio = r["kernel_s"] / ref["kernel_s"] if same and ref["kernel_s"] > 0 else math.nan
            bar = BARS.get(c)
            miss = bar is not None and ratio > bar
            if miss:
                verdict["bars_missed"].append(f"{name} at {c}: {ratio:.2f}x (bar {bar}x)")
            bw = f", {r['block_tasks']} bw" if r.get("block_tasks") else ""
            cells.append(("" if same else "**DIFFERENT** ") + f"{ratio:.2f}x{bw}"
                         + (" (!)" if miss else ""))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"runs {verdict['runs']}: ok {verdict['ok']} (identical to uncapped "
                 f"{verdict['identical']}), does-not-fit {verdict['does-not-fit']}, error "
                 f"{verdict['error']}, crash {verdict['crash']}, timeout "
                 f"{verdict.get('timeout', 0)}, not run {verdict.get('not-run', 0)}")
    lines.append("bars missed: " + ("; ".join(verdict["bars_missed"]) or "none"))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--mirror", nargs="*", default=[], help="CSR files of real graphs")
    ap.add_argument("--standins", default="", help="presets (comma list) or 'all'")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--paper-sized", default="", help="presets run at scale 1, seed 1")
    ap.add_argument("--caps", default=DEFAULT_CAPS)
    ap.add_argument("--variant", default="cuMBE")
    ap.add_argument("--rounds", action="store_true",
                    help="the maximality check in rounds (the same layout and memory plan)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=540)
    ap.add_argument("--run-limit", type=float, default=60, help="seconds one run may take")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--root", default=str(REPO), help="checkout whose engine runs")
    ap.add_argument("--graph-dir", type=Path, default=Path("/tmp/standins-caps"))
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO / "benchmarks"))
    import standins

    names = standins.preset_names() if a.standins == "all" else [
        x for x in a.standins.split(",") if x]
    specs = [(n, int(s), a.scale) for n in names for s in a.seeds.split(",")]
    specs += [(n, 1, 1.0) for n in a.paper_sized.split(",") if n]
    t0 = time.time()
    paths = list(a.mirror) + generate(specs, a.graph_dir, a.jobs)
    print(f"{len(paths)} graphs ready in {time.time() - t0:.0f} s", flush=True)
    # this checkout's memory model (an older --root may not have the function)
    small = smallest_caps(paths, a.variant) if "smallest" in a.caps else {p: math.nan for p in paths}
    caps = a.caps.split(",")
    jobs = []
    for p in paths:
        sm = math.ceil(small[p] * 1000) / 1000 if small[p] == small[p] else math.nan
        meta = Path(p).with_suffix(".json")
        n_edges = None
        if meta.exists():
            try:
                n_edges = json.loads(meta.read_text()).get("realised", {}).get("n_edges")
            except ValueError:
                pass
        for c in ["none"] + [c for c in caps if c != "none"]:
            jobs.append(dict(name=Path(p).stem, graph=p, cap=c, cap_gib=cap_gib(c, sm),
                             smallest_gib=sm, n_edges=n_edges, variant=a.variant,
                             repeats=a.repeats, **({"rounds": True} if a.rounds else {})))
    runs = run_jobs(jobs, a.out, a.root, a.budget - (time.time() - t0), a.run_limit)
    text = summarise(runs)
    (a.out / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
