set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/nbc-dbg CUMBE_LINEINFO=1 CUMBE_NOINLINE=1
P4='{"variant": "noES", "threads": 128, "side": "left", "instrument": false, "idle_fraction": 0.0, "blocks": 2, "k": 2, "eager_steal": 1, "warp_arena_words": 50}'
timeout 240 compute-sanitizer --tool memcheck --print-limit 3 --show-backtrace device python3 .dbg/case.py 7 "$P4" > $OUT/sanitizer.txt 2>&1
grep -v "^=========     Host Frame" $OUT/sanitizer.txt | sed 's/(Array<[^)]*)//g' | head -40
