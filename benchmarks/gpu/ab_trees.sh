#!/usr/bin/env bash
# Kernel seconds of two source trees in turn, two rounds, on the GPU machine (repo root, after
# benchmarks/gpu/device_env.sh and a warm cuMBE:128 build of both trees):
#   bash benchmarks/gpu/ab_trees.sh BASE_DIR BASE_TAG OUT_DIR STANDIN.csr MIRROR.csr...
# BASE_DIR: the tree to compare with (e.g. `git archive <commit> cumbe mbebench
# benchmarks/gpu/warm.py benchmarks/gpu/device_env.sh`, its numba cache in /tmp/nbc-BASE_TAG);
# this tree is "new". Per round: the stand-in once per tree, the mirror graphs 7 launches each
# (time_tree.py: medians, counts against reference.json). Writes OUT_DIR/runs.jsonl and
# OUT_DIR/table.txt (new/base of the round means, mismatches).
set -u
BASE=$1 TAG=$2 R=$3 G=$4; shift 4
mkdir -p "$R"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
TT=$PWD/benchmarks/gpu/results/2026-11-26-progress-blocks/time_tree.py
M=$(for m in "$@"; do realpath "$m"; done)
t() { # tree reps graphs...
  local tr=$1; shift
  if [ "$tr" = base ]; then (cd "$BASE" && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$TAG CUMBE_PROGRESS_S=1000 timeout 120 python3 "$TT" "$TAG" "$@" >> "$R/runs.jsonl" 2>>"$R/err.log")
  else CUMBE_PROGRESS_S=1000 timeout 120 python3 "$TT" new "$@" >> "$R/runs.jsonl" 2>>"$R/err.log"; fi
  el "$tr" "$@" | cut -c1-60
}
for rnd in 1 2; do
  t base 1 "$G"; t new 1 "$G"
  t base 7 $M; t new 7 $M
done
python3 - "$R/runs.jsonl" "$TAG" <<'PY' | tee "$R/table.txt"
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
base = sys.argv[2]
by = {}
for r in rows:
    by.setdefault(r["graph"], {}).setdefault(r["tree"], []).append(r["median_s"])
print(f"{'graph':32} {base}(r1,r2) new(r1,r2) new/{base}")
for g, d in by.items():
    s, n = d.get(base, []), d.get("new", [])
    if s and n:
        print(f"{g:32} {' '.join(f'{x:.5f}' for x in s)}  {' '.join(f'{x:.5f}' for x in n)}  {statistics.mean(n)/statistics.mean(s):.4f}")
bad = [r for r in rows if r["reference_ok"] is False]
counts = {}
for r in rows: counts.setdefault(r["graph"], set()).add((r["count"], r["fp"]))
print("reference mismatches:", len(bad), "; graphs whose trees disagree:", [g for g, c in counts.items() if len(c) > 1])
PY
