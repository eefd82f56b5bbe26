"""compute-sanitizer memcheck on the small-cap runs of small graphs (issue 17, item 2).

On a GPU machine, from the repository root (CSR files of the mirror graphs in .csr/, benchmarks/README.md):

    python3 benchmarks/memory-caps/memcheck.py --out results/memcheck \
        --graphs .csr/unicodelang.csr,.csr/brunson_corporate-leadership.csr,.csr/opsahl-ucforum.csr \
        --standins BookCrossing-blocks --scale 0.02 --caps smallest,0.25,0.5 --budget 240

For every graph: an uncapped run without the sanitizer (the reference count and fingerprint),
then one run per cap under ``compute-sanitizer --tool memcheck``.  A cap passes when the
sanitizer reports 0 errors and the count and fingerprint equal the reference.  ``smallest`` is
:func:`cumbe.engine.smallest_memory_gib` (one block: every arena and buffer at its least).
Writes ``memcheck.jsonl`` (one line per run) and ``memcheck.md`` under --out; exits 1 when any
run did not pass.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) error")


def run(graph: Path, cap, scratch: Path, sanitize: bool, limit: float) -> dict:
    js = scratch / f"{graph.stem}-{cap}.json"  # the CLI's --json, read back at once
    cmd = [sys.executable, "-m", "cumbe", "run", str(graph), "--json", str(js)]
    if cap is not None:
        cmd += ["--device-memory-gib", f"{cap:.6f}"]
    if sanitize:
        cmd = ["compute-sanitizer", "--tool", "memcheck", "--print-limit", "10"] + cmd
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return dict(status="timeout", wall_s=limit)
    row = dict(wall_s=round(time.perf_counter() - t0, 2), rc=p.returncode)
    text = p.stdout + p.stderr
    m = SUMMARY.search(text)
    if sanitize:
        row["sanitizer_errors"] = int(m.group(1)) if m else None
    if p.returncode != 0 or not js.exists():
        row.update(status="error", message=" ".join(text.split())[-600:])
        return row
    d = json.loads(js.read_text())
    s = d["stats"]
    row.update(status="ok", count=d["count"], fingerprint=d["fingerprint"], kernel_s=d["kernel_s"],
               blocks=s.get("blocks"), block_tasks=s.get("block_tasks"),
               arena_words=s.get("arena_words_per_warp"), memory_bytes=s.get("memory_bytes"))
    if sanitize and row["sanitizer_errors"] != 0:
        row["status"] = "sanitizer"
        row["message"] = " ".join(text.split())[:1500]
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--graphs", default="", help="comma list of CSR files")
    ap.add_argument("--standins", default="", help="comma list of stand-in presets")
    ap.add_argument("--scale", type=float, default=0.02, help="stand-in scale")
    ap.add_argument("--caps", default="smallest,0.25,0.5")
    ap.add_argument("--limit", type=float, default=150, help="seconds one sanitized run may take")
    ap.add_argument("--budget", type=float, default=240)
    a = ap.parse_args()
    if shutil.which("compute-sanitizer") is None:
        sys.exit("memcheck.py: compute-sanitizer is not on PATH (a CUDA toolkit's bin/; GPU "
                 "machine only)")
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    graphs = [Path(g) for g in a.graphs.split(",") if g]
    presets = [p for p in a.standins.split(",") if p]
    if presets:  # the sweep's generator: the same files, named by their parameters
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from sweep import generate

        graphs += [Path(g) for g in generate([(p, 1, a.scale) for p in presets],
                                             Path("/tmp/memcheck-standins"), len(presets))]
    from cumbe.engine import smallest_memory_gib
    from mbebench.csr import read_csr

    rows, bad = [], 0
    scratch = Path(tempfile.mkdtemp(prefix="memcheck-"))
    with open(a.out / "memcheck.jsonl", "w") as fh:
        for g in graphs:
            ref = run(g, None, scratch, False, a.limit)
            caps = []
            for c in a.caps.split(","):
                if c == "smallest":
                    caps.append(("smallest", smallest_memory_gib(read_csr(g)) + 1e-6))
                else:
                    caps.append((c, float(c)))
            for name, cap in caps:
                if time.perf_counter() - t0 > a.budget:
                    row = dict(status="not run")
                else:
                    row = run(g, cap, scratch, True, a.limit)
                row.update(graph=g.stem, cap=name, cap_gib=round(cap, 4))
                if row["status"] == "ok" and ref.get("status") == "ok":
                    row["same_as_uncapped"] = (row["count"], row["fingerprint"]) == (
                        ref["count"], ref["fingerprint"])
                    if not row["same_as_uncapped"]:
                        row["status"] = "mismatch"
                bad += row["status"] != "ok"
                rows.append(row)
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(json.dumps(row), flush=True)
    lines = ["| graph | cap | GiB | blocks | block-wide tasks | memcheck errors | same as uncapped "
             "| wall s | status |", "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        lines.append(f"| {r['graph']} | {r['cap']} | {r['cap_gib']} | {r.get('blocks', '')} | "
                     f"{r.get('block_tasks', '')} | {r.get('sanitizer_errors', '')} | "
                     f"{r.get('same_as_uncapped', '')} | {r.get('wall_s', '')} | {r['status']} |")
    (a.out / "memcheck.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"memcheck: {len(rows) - bad} of {len(rows)} runs clean and equal to uncapped")
    return 1 if bad else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
