#!/usr/bin/env bash
# The real pipeline (snakemake --cores all) on the device machine, on the KONECT mirror:
# tables, plots and report as the reference result set.  One device call, from the repo root:
#
#   bash benchmarks/device-pipeline/run.sh          # carry: .whl .whl-smk .mirror
#
# .whl: numpy 2.4.6 (the image's 2.5 breaks numba-cuda 0.30.4; docs/gpu.md); .whl-smk:
# Snakemake 9.27.1, pandas 3.1.1, jsonschema and their dependencies that the image lacks
# (README.md here says how they were made); .mirror: the 8 paper archives of the KONECT mirror.
# Everything lands under $OUT: results.tar.gz (tables, plots, report, rows, logs), summary.md,
# speedup.md, snakemake.log, versions.txt; a short summary is printed last.
#
# The device stops a command at 600 s, and the whole run takes longer (88 runs, one at a time,
# each paying a few seconds of process and CUDA start).  Call it again at once with RESUME=1,
# while the machine is still warm: it goes on in the same work folder where the first call
# stopped (a machine that was given back meanwhile starts afresh, as without RESUME).
#
# Rehearsal without a GPU (cuMBE rows become 'skipped'), e.g. with a Python 3.12 that has
# numba and numba-cuda:  PYTHON=/tmp/devimg/bin/python OUT=/tmp/out bash benchmarks/device-pipeline/run.sh
set -u
T0=$(date +%s)
REPO=$(pwd)
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/mbe-device-out}
SITE=${SITE:-/tmp/mbe-site}
WORK=${WORK:-/tmp/mbe-pipeline}
BUDGET_S=${BUDGET_S:-560}        # the device's limit per command is 600 s
mkdir -p "$OUT"
elapsed() { echo $(( $(date +%s) - T0 )); }
RESUMED=""
if [ "${RESUME:-0}" = 1 ] && [ -f "$WORK/mirror.yaml" ] && [ -d "$SITE" ]; then
  RESUMED=1
fi

if [ -z "$RESUMED" ]; then
# 1. packages: the carried wheels shadow the image's (PYTHONPATH first), the repo by PYTHONPATH;
#    rules call `python`, which some images lack: a shim to this interpreter
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target "$SITE" .whl/*.whl .whl-smk/*.whl > "$OUT/pip.log" 2>&1 \
  || { tail -20 "$OUT/pip.log"; echo "run.sh: installing the carried wheels failed"; exit 1; }
fi
# (a wrapper, not a symlink: a venv's python finds its packages from the path it was started
# by; in a fresh folder, so that nothing is ever written through an old link)
BIN=$(mktemp -d /tmp/mbe-bin.XXXXXX)
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$PY")" > "$BIN/python"
chmod +x "$BIN/python"
export PATH=$BIN:$PATH PYTHONPATH=$SITE:$REPO PYTHONUNBUFFERED=1
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/mbe-numba-cache}
python - > "$OUT/versions.txt" 2>&1 <<'PY' || { cat "$OUT/versions.txt"; echo "run.sh: imports failed"; exit 1; }
import importlib.metadata as m
import sys

print("python", sys.version.split()[0], sys.executable)
import jsonschema, matplotlib, numba, numpy, pandas, snakemake  # noqa: F401,E401  must import
from numba import cuda  # noqa: F401  numba-cuda with this numpy

import mbebench

for p in ("snakemake", "pandas", "matplotlib", "numpy", "numba", "numba-cuda", "jsonschema"):
    print(p, m.version(p))
print("mbebench from", mbebench.__file__)
PY
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 \
    || echo "no nvidia-smi"; grep -m1 "model name" /proc/cpuinfo; nproc; } >> "$OUT/versions.txt"

SMK=(python -m snakemake --directory "$WORK" --scheduler greedy --rerun-incomplete
     --configfile "$REPO/benchmarks/device-pipeline/overrides.yaml" "$WORK/mirror.yaml")
if [ -z "$RESUMED" ]; then
# 2. the work folder: the repo's config, the mirror as konect.base_url
if [ -e "$WORK" ] && [ ! -f "$WORK/mirror.yaml" ]; then
  echo "run.sh: $WORK exists and is not an earlier work folder of this script; set WORK"; exit 1
fi
rm -rf "$WORK" && mkdir -p "$WORK/config"
cp config/config.yaml "$WORK/config/config.yaml"
printf 'konect:\n  base_url: "file://%s/.mirror/"\n' "$REPO" > "$WORK/mirror.yaml"

# 3. downloads and conversions while the GPU kernels compile into numba's cache (8 builds,
#    ~30 s each on one core; warm.py compiles them side by side): no timed run is going yet
if nvidia-smi -L > /dev/null 2>&1; then
  python benchmarks/gpu/warm.py --jobs 8 cuMBE:128 noRS:128 noES:128 noWS:128 \
    cuMBE-instr:128 noRS-instr:128 noES-instr:128 noWS-instr:128 > "$OUT/warm.jsonl" 2>&1 &
  WARM=$!
fi
"${SMK[@]}" --cores all --until convert > "$OUT/snakemake.log" 2>&1
[ -n "${WARM:-}" ] && wait "$WARM"
echo "ingest and warm-up done at $(elapsed) s" >> "$OUT/snakemake.log"
else
  echo "resumed in $WORK" > "$OUT/snakemake.log"
fi

# 4. the pipeline; what is left of the budget, less a minute for the report and the archive
LEFT=$(( BUDGET_S - $(elapsed) - 60 ))
timeout --kill-after=20 "$LEFT" "${SMK[@]}" --cores all --keep-going >> "$OUT/snakemake.log" 2>&1
RC=$?
echo "snakemake exit status $RC at $(elapsed) s" >> "$OUT/snakemake.log"
if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then
  "${SMK[@]}" --unlock >> "$OUT/snakemake.log" 2>&1
fi
"${SMK[@]}" --report "$WORK/results/report.html" > "$OUT/report.log" 2>&1 \
  || echo "run.sh: snakemake --report failed (report.log)"

# 5. what comes back: one archive (no CSR files or KONECT archives), and the two tables
cp "$WORK/results/tables/summary.md" "$WORK/results/tables/speedup.md" "$OUT/" 2>/dev/null
tar -czf "$OUT/results.tar.gz" -C "$WORK" --exclude='*.csr' --exclude='*.tar.bz2' \
  --exclude='*.sha256' --exclude='.snakemake/conda' --exclude='.snakemake/incomplete' \
  results logs resources config mirror.yaml .snakemake/log 2>> "$OUT/snakemake.log"

# 6. the summary, last
python - "$WORK" "$RC" "$(elapsed)" <<'PY'
import collections, json, pathlib, sys
work, rc, secs = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = [json.loads(p.read_text()) for p in sorted(work.glob("results/runs/*/*.json"))]
by = collections.Counter(r["status"] for r in rows)
print(f"== device pipeline: snakemake exit status {rc}, {secs} s in all ==")
print("rows:", dict(by), "of", len(rows))
env = next((r.get("env") for r in rows if r.get("env")), None) or {}
print("env:", env.get("cpu_model"), env.get("cpu_count"), "cores;", env.get("gpu"),
      env.get("gpu_driver"), "CUDA", env.get("cuda_driver"), "numba", env.get("numba"),
      "numba-cuda", env.get("numba_cuda"))
groups = collections.defaultdict(list)  # runs that did not end ok, by status and message
for r in rows:
    if r["status"] not in ("ok", "unavailable"):
        groups[(r["status"], (r.get("message") or "")[:100])].append(f"{r['dataset']}/{r['run_id']}")
for (status, msg), runs in sorted(groups.items()):
    print(f"  {status} ({msg}): {len(runs)} run(s), e.g. {', '.join(runs[:3])}")
unav = sorted({r["dataset"] for r in rows if r["status"] == "unavailable"})
print("unavailable datasets:", ", ".join(unav) or "none")
check = work / "logs/check_counts.log"
if (work / "results/tables/agreement.txt").exists():
    print("check_counts: every engine agrees on every dataset")
elif check.exists():
    print("check_counts:", *check.read_text().splitlines()[:30], sep="\n  ")
else:
    print("check_counts: did not run")
speed = work / "results/tables/speedup.md"
print(speed.read_text() if speed.exists() else "no speedup table")
PY
