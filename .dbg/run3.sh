set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/nbc
python3 benchmarks/gpu/warm.py --jobs 8 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 > $OUT/warm.jsonl 2>&1
B='"threads": 128, "side": "left", "instrument": false, "idle_fraction": 0.0, "warp_arena_words": 50, "k": 2'
for VB in "noES 0" "noES 2" "cuMBE 0" "noRS 7"; do set -- $VB
 timeout 30 python3 .dbg/case.py 7 "{\"variant\": \"$1\", $B, \"blocks\": $2, \"eager_steal\": 1}" 2>&1 | grep RESULT | cut -c1-60,200-260
done
timeout 55 python3 benchmarks/gpu/verify_and_time.py --out $OUT/oracle --budget 55 --examples 20 --datasets none --skip grids,variants,instr,side > $OUT/oracle.log 2>&1
grep "oracle:" $OUT/oracle.log; grep -m3 ERROR $OUT/oracle.log | cut -c1-300
timeout 75 python3 benchmarks/gpu/verify_and_time.py --out $OUT/new --budget 70 --repeats 3 --skip oracle,grids,variants,instr,side > $OUT/new.log 2>&1
tail -13 $OUT/new.log
