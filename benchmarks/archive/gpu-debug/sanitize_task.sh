#!/usr/bin/env bash
# One device call: compute-sanitizer's synccheck, racecheck and initcheck (and memcheck) on
# one block-wide task alone on one block (found by block_wide_bisect.py).  Carry: .whl, .csr.
#   GRAPH (.csr/marvel.csr), AW (2496), J (214: the task's place in the block-wide order)
set -u
. "$(dirname "$0")/../../gpu/device_env.sh"
GRAPH=${GRAPH:-.csr/marvel.csr}; AW=${AW:-2496}; J=${J:-214}
python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > "$OUT/warm.jsonl" 2>&1
for tool in ${TOOLS:-synccheck racecheck initcheck memcheck}; do
  timeout "${TOOL_S:-90}" compute-sanitizer --tool "$tool" --print-limit 6 python3 \
    benchmarks/archive/gpu-debug/block_wide_bisect.py "$GRAPH" "$AW" --child "$J" "$((J + 1))" \
    --warp-tasks none --blocks 1 > "$OUT/$tool.txt" 2>&1
  echo "== $tool (rc $?)"; grep -v "^  File\|^    \|^Traceback\|^numba\|^Exception ignored" "$OUT/$tool.txt" | head -c 3500; echo
done
