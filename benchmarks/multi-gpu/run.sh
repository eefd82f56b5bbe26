#!/usr/bin/env bash
# cuMBE on 1 GPU and on 2 GPUs (devices=all) of one machine, on stand-ins with ~2e9 maximal
# bicliques and on the crown graph S_33 (2^33 - 2 bicliques), 16-process ParMBE beside them;
# counts checked.  From the repository root, on a machine with 2 NVIDIA GPUs:
#   bash benchmarks/multi-gpu/run.sh results/multi-gpu
# Everything (kernel compile, graph generation, the runs) within BUDGET_S seconds of the driver
# (default 470) and a hard stop at TOTAL_S (default 530).  Writes results.jsonl, results.md,
# parmbe.jsonl, warm.jsonl, bench.log and nvidia-smi.txt into the folder given.
# Dry run without a GPU (CUDA simulator, two fake devices, tiny graphs):
#   MGPU_TINY=1 bash benchmarks/multi-gpu/run.sh /tmp/mgpu-dry
set -u
DIR=${1:?usage: bash benchmarks/multi-gpu/run.sh OUTPUT_DIR}
mkdir -p "$DIR"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
if [ "${MGPU_TINY:-0}" != 1 ]; then
  nvidia-smi > "$DIR/nvidia-smi.txt" 2>&1
fi
timeout -k 10 "${TOTAL_S:-530}" python3 "$(dirname "$0")/bench.py" --out "$DIR" \
  --budget "${BUDGET_S:-470}" ${BENCH_ARGS:-} 2>&1 | tee "$DIR/bench.log"
exit "${PIPESTATUS[0]}"
