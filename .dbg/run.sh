set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/nbc
python3 benchmarks/gpu/warm.py --jobs 8 cuMBE:128 noES:128 noWS:128 noRS:128 > $OUT/warm.jsonl 2>&1
B='"variant": "noES", "threads": 128, "side": "left", "instrument": false, "idle_fraction": 0.0'
for P in \
 "{$B, \"blocks\": 0, \"k\": 2, \"eager_steal\": 1, \"warp_arena_words\": 50}" \
 "{$B, \"blocks\": 0, \"k\": 2, \"eager_steal\": 1, \"warp_arena_words\": 50}" \
 "{$B, \"blocks\": 0, \"k\": 2, \"eager_steal\": 0, \"warp_arena_words\": 50}" \
 "{$B, \"blocks\": 0, \"k\": 2, \"eager_steal\": 1}" \
 "{$B, \"blocks\": 7, \"k\": 2, \"eager_steal\": 1, \"warp_arena_words\": 50}" \
 "{$B, \"blocks\": 2, \"k\": 2, \"eager_steal\": 1, \"warp_arena_words\": 50}" \
 "{$B, \"blocks\": 0, \"k\": 3, \"eager_steal\": 1, \"warp_arena_words\": 50}" \
 "{$B, \"blocks\": 0, \"k\": 1, \"eager_steal\": 1, \"warp_arena_words\": 50}" \
 ; do timeout 60 python3 .dbg/case.py 7 "$P" 2>&1 | grep RESULT; done
P2='{"variant": "cuMBE", "threads": 128, "side": "left", "instrument": false, "idle_fraction": 0.0, "blocks": 0, "k": 2, "eager_steal": 1, "warp_arena_words": 50}'
timeout 60 python3 .dbg/case.py 7 "$P2" 2>&1 | grep RESULT
P3='{"variant": "noWS", "threads": 128, "side": "left", "instrument": false, "idle_fraction": 0.0, "blocks": 0, "k": 2, "eager_steal": 1, "warp_arena_words": 50}'
timeout 60 python3 .dbg/case.py 7 "$P3" 2>&1 | grep RESULT
P4='{"variant": "noES", "threads": 128, "side": "left", "instrument": false, "idle_fraction": 0.0, "blocks": 0, "k": 2, "eager_steal": 1, "warp_arena_words": 50}'
CUMBE_LINEINFO=1 NUMBA_CACHE_DIR=/tmp/nbc-li timeout 200 compute-sanitizer --tool memcheck --print-limit 5 python3 .dbg/case.py 7 "$P4" > $OUT/sanitizer.txt 2>&1
grep -v "^=========     Host Frame\|^=========         " $OUT/sanitizer.txt | head -60
