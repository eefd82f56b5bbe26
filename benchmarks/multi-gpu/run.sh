#!/usr/bin/env bash
# One device call on a node with 2 GPUs (nvidia-h100-x2), from the repo root, carry [".whl"]:
#   bash benchmarks/multi-gpu/run.sh "$OUT"
# cuMBE on 1 GPU and on 2 GPUs (devices=all) on stand-ins with ~1.5e9 maximal bicliques and
# on the crown graph S_33 (2^33 - 2 bicliques), 16-process ParMBE beside them; counts checked.
# Everything (numpy wheel install, kernel compile, graph generation) within BUDGET_S seconds of
# the driver (default 470) and a hard stop at TOTAL_S (default 530).  Writes results.jsonl,
# results.md, parmbe.jsonl, warm.jsonl, bench.log and nvidia-smi.txt under $OUT.
# Dry run without a GPU (CUDA simulator, two fake devices, tiny graphs):
#   MGPU_TINY=1 bash benchmarks/multi-gpu/run.sh /tmp/mgpu-dry
set -u
OUT=${1:-${OUT:-/tmp/mgpu-out}}
export OUT
mkdir -p "$OUT"
if [ "${MGPU_TINY:-0}" = 1 ]; then
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
else
  . "$(dirname "$0")/../gpu/device_env.sh"   # numpy wheel into /tmp/site, PYTHONPATH, NUMBA_CACHE_DIR
  nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
fi
timeout -k 10 "${TOTAL_S:-530}" python3 "$(dirname "$0")/bench.py" --out "$OUT" \
  --budget "${BUDGET_S:-470}" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log"
exit "${PIPESTATUS[0]}"
