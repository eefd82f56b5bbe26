#!/usr/bin/env bash
# The published codes through the whole pipeline on one GPU machine (benchmarks/published/).
#
#   bash benchmarks/published/run.sh WORKDIR [KONECT_MIRROR [GITHUB_MIRROR]]
#
# WORKDIR: a new folder for the run.  KONECT_MIRROR: a folder of download.tsv.<name>.tar.bz2
# (default: konect.cc).  GITHUB_MIRROR: a folder of <owner>/<repo>/archive/<commit>.tar.gz
# (default: github.com).  Run from the repository root in the environment of environment.yml,
# with nvcc, g++ and TBB's headers (libtbb-dev) for all four codes.  Writes the tables into
# WORKDIR/results/tables and the rows into WORKDIR/results/runs.  OVERRIDES: another plan
# (default: this folder's overrides.yaml; multi-gpu.yaml: GMBE's and our multi-GPU modes).
set -u
WORK=${1:?usage: bash benchmarks/published/run.sh WORKDIR [KONECT_MIRROR [GITHUB_MIRROR]]}
REPO=$(pwd)
[ -f "$REPO/Snakefile" ] || { echo "run.sh: run it from the repository root"; exit 1; }
mkdir -p "$WORK/config" "$WORK/graphs"
WORK=$(cd "$WORK" && pwd)
cp "$REPO/config/config.yaml" "$WORK/config/config.yaml"
python "$REPO/benchmarks/published/crowns.py" "$WORK/graphs" 16 21 18x8200 || exit 1
{
  [ -n "${2:-}" ] && printf 'konect:\n  base_url: "file://%s/"\n' "$(cd "$2" && pwd)"
  [ -n "${3:-}" ] && printf 'published:\n  github_url: "file://%s/"\n' "$(cd "$3" && pwd)"
  echo "datasets:"
  for s in 16 21 18x8200; do
    echo "  crown-$s: {path: $WORK/graphs/out.crown-$s}"
  done
} > "$WORK/local.yaml"
export PYTHONPATH=$REPO${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
SMK=(python -m snakemake --directory "$WORK" --cores all --rerun-incomplete
     --configfile "${OVERRIDES:-$REPO/benchmarks/published/overrides.yaml}" "$WORK/local.yaml")
# cuMBE's build compiles into numba's cache while the data converts and the codes build
if nvidia-smi -L > /dev/null 2>&1; then
  python benchmarks/gpu/warm.py --jobs 2 cuMBE:128 cuMBE-pieces:128 > "$WORK/warm.jsonl" 2>&1 &
  WARM=$!
fi
"${SMK[@]}" --until convert
[ -n "${WARM:-}" ] && wait "$WARM"
"${SMK[@]}" --keep-going
RC=$?
echo "snakemake exit status $RC; tables in $WORK/results/tables"
exit "$RC"
