#!/usr/bin/env bash
# The whole pipeline on one GPU machine, as in this folder's result/: Table I, Fig. 6 and 7,
# ParMBE scaling and the report, with benchmarks/device-pipeline/overrides.yaml.
#
#   bash benchmarks/device-pipeline/run.sh WORKDIR [MIRROR]
#
# WORKDIR: a new folder for the run (its config, downloads, CSR files, rows, tables, plots,
# report.html).  MIRROR: a folder of KONECT archives (download.tsv.<name>.tar.bz2) to read
# instead of konect.cc.  Run from the repository root, in the environment of environment.yml
# (Python, Snakemake, numba-cuda) on a machine with an NVIDIA GPU; without one the cuMBE rows
# are 'skipped' and the rest still runs.  Snakemake exits 1 when a dataset is unavailable: the
# check_counts rule names it, and the tables list it.
set -u
WORK=${1:?usage: bash benchmarks/device-pipeline/run.sh WORKDIR [MIRROR]}
MIRROR=${2:-}
REPO=$(pwd)
[ -f "$REPO/Snakefile" ] || { echo "run.sh: run it from the repository root"; exit 1; }
mkdir -p "$WORK/config"
WORK=$(cd "$WORK" && pwd)
cp "$REPO/config/config.yaml" "$WORK/config/config.yaml"
CONFIGS=("$REPO/benchmarks/device-pipeline/overrides.yaml")
if [ -n "$MIRROR" ]; then
  printf 'konect:\n  base_url: "file://%s/"\n' "$(cd "$MIRROR" && pwd)" > "$WORK/mirror.yaml"
  CONFIGS+=("$WORK/mirror.yaml")
fi
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
SMK=(python -m snakemake --directory "$WORK" --cores all --rerun-incomplete
     --configfile "${CONFIGS[@]}")

# 1. downloads and conversions while the 10 cuMBE kernel builds the plan runs compile into
#    numba's disk cache side by side (about 30 s of one core each): no timed run compiles
if nvidia-smi -L > /dev/null 2>&1; then
  python benchmarks/gpu/warm.py --jobs 10 cuMBE:128 noRS:128 noES:128 noWS:128 \
    cuMBE-instr:128 noRS-instr:128 noES-instr:128 noWS-instr:128 cuMBE-rounds:128 \
    cuMBE-instr-rounds:128 > "$WORK/warm.jsonl" 2>&1 &
  WARM=$!
fi
"${SMK[@]}" --until convert
if [ -n "${WARM:-}" ]; then
  wait "$WARM"
fi

# 2. the pipeline, then the report
"${SMK[@]}" --keep-going
RC=$?
"${SMK[@]}" --report "$WORK/results/report.html" || echo "run.sh: snakemake --report failed"
echo "snakemake exit status $RC; tables in $WORK/results/tables, plots in $WORK/results/plots"
exit "$RC"
