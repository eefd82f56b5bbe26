#!/usr/bin/env bash
# The preamble of a two-tree device check (repo root, after benchmarks/gpu/device_env.sh):
#   bash benchmarks/gpu/warm_two_trees.sh BASE_DIR TAG OUT_DIR
# warms this tree's 14 builds (plain, -instr, -pieces, -instr-pieces of the variants that have
# them) and BASE_DIR's cuMBE:128 (its numba cache in /tmp/nbc-TAG), in parallel, and makes the
# timing graphs /tmp/g/IMDB-actor-hard-s1-x0.25.csr and /tmp/g/crown-24.csr; the compile records
# go to OUT_DIR/warm-new.jsonl and OUT_DIR/warm-base.jsonl.
set -u
BASE=$1 TAG=$2 R=$3
mkdir -p "$R"
nvidia-smi -L > "$R/gpu.txt"
(cd "$BASE" && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$TAG timeout 220 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > "$R/warm-base.jsonl" 2>&1) &
B=""
for v in cuMBE noRS noES noWS; do B="$B $v:128 $v-instr:128"; done
for v in cuMBE noES noWS; do B="$B $v-pieces:128 $v-instr-pieces:128"; done
timeout 220 python3 benchmarks/gpu/warm.py --jobs 15 $B > "$R/warm-new.jsonl" 2>&1 &
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.25 --out /tmp/g > /dev/null
python3 benchmarks/standins.py --crown 24 --out /tmp/g > /dev/null
wait
cat "$R/warm-new.jsonl" "$R/warm-base.jsonl" | cut -c1-200
