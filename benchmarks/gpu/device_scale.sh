#!/usr/bin/env bash
# One device call: warm the kernel cache and generate the stand-ins (in parallel, CPU),
# then the scale benchmark (cuMBE vs 16-process ParMBE on the stand-ins, one memory-capped
# run) and, with the time left, the oracle check and the mirror timings.
# Carry: .whl (numpy 2.4 cp312 wheel), .csr (mirror CSR files), .old (optional).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/nbc
OUT=${OUT:-/tmp/out}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
BUILDS=${BUILDS:-"cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128"}
python3 benchmarks/gpu/warm.py --jobs 8 $BUILDS > "$OUT/warm.jsonl" 2>&1 &
W=$!
PRESETS=${PRESETS:-"YouTube,BookCrossing,stackoverflow,IMDB-actor,DBLP-author"}
for p in ${PRESETS//,/ }; do
  python3 benchmarks/standins.py --preset "$p" --seed 1 --out /tmp/standins > /dev/null 2>&1 &
done
wait
cat "$OUT/warm.jsonl"
timeout "${SCALE_S:-330}" python3 benchmarks/gpu/scale.py --out "$OUT/scale" --presets "$PRESETS" \
  --budget "${SCALE_S:-330}" --parmbe 16 --cap-gib 24 ${SCALE_ARGS:-} > "$OUT/scale.log" 2>&1
if [ "${VERIFY_S:-0}" -gt 0 ]; then
  timeout "$VERIFY_S" python3 benchmarks/gpu/verify_and_time.py --out "$OUT/new" \
    --budget "$VERIFY_S" --repeats 3 --examples "${EXAMPLES:-30}" --ablation-max-s 1 \
    --skip "${SKIP:-side,grids,variants}" > "$OUT/new.log" 2>&1
  tail -14 "$OUT/new.log"
fi
tail -25 "$OUT/scale.log"
