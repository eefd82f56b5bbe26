#!/usr/bin/env bash
# One device call: warm the kernel cache, time the previous engine (.old/, a `git archive`
# of the commit to compare with) and the current one on the mirror CSR files (.csr/), then
# the GPU oracle check.  Carry: .whl (numpy 2.4 cp312 wheel), .csr, .old.  See docs/gpu.md.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/nbc
OUT=${OUT:-/tmp/out}
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
BUILDS=${BUILDS:-"cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128"}
python3 benchmarks/gpu/warm.py --jobs 8 $BUILDS > "$OUT/warm.jsonl" 2>&1 &
W=$!
if [ -d .old ] && [ "${OLD:-1}" = 1 ]; then
  (cd .old && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-old timeout "${OLD_S:-200}" \
    python3 benchmarks/gpu/verify_and_time.py --out "$OUT/old" --csr-dir ../.csr \
    --budget "${OLD_S:-200}" --repeats 3 --skip oracle,grids,variants,instr,side) > "$OUT/old.log" 2>&1
fi
wait $W
cat "$OUT/warm.jsonl"
timeout "${NEW_S:-330}" python3 benchmarks/gpu/verify_and_time.py --out "$OUT/new" \
  --budget "${NEW_S:-330}" --repeats 3 --examples "${EXAMPLES:-40}" --ablation-max-s 2 \
  --skip "${SKIP:-side}" > "$OUT/new.log" 2>&1
tail -5 "$OUT/old.log"
grep -v "^corporate\|^Unicode\|^UCforum" "$OUT/new.log" | tail -45
