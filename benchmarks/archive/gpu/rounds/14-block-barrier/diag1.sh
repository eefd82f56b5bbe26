set -u
. benchmarks/gpu/device_env.sh
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv
# 1. G dependence: the one task alone on one block, threads 64/128/256 (parallel, cold compiles)
for T in 64 128 256; do
  (THREADS=$T NUMBA_CACHE_DIR=/tmp/nbc$T timeout 200 python3 .devrun/bwb.py .csr/marvel.csr 2496 --child 214 215 --warp-tasks none --blocks 1 > $OUT/t$T.txt 2>&1; echo "threads $T rc $?" >> $OUT/t$T.txt) &
done
wait
for T in 64 128 256; do echo "== threads $T"; grep -E "CHILD|rc " $OUT/t$T.txt | head -5; done
# 2. memcheck, device functions not inlined, with source lines
export CUMBE_NOINLINE=1 CUMBE_LINEINFO=1
for tool in memcheck initcheck; do
  timeout 170 compute-sanitizer --tool $tool --print-limit 3 python3 .devrun/bwb.py .csr/marvel.csr 2496 --child 214 215 --warp-tasks none --blocks 1 > $OUT/$tool.txt 2>&1
  echo "== $tool rc $?"; grep -E "=====|CHILD" $OUT/$tool.txt | grep -v "Host Frame\|Saved host" | sed 's/(Array<[^)]*)//g' | head -40
done
