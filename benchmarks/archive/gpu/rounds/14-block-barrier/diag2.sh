set -u
. benchmarks/gpu/device_env.sh
export CUMBE_LINEINFO=1
T="python3 .devrun/bwb.py .csr/marvel.csr 2496 --child 214 215 --warp-tasks none --blocks 1"
# experiments: fenced / aligned block barriers (cold compiles in parallel with the sass dump)
(CUMBE_BSYNC=fence timeout 200 $T > $OUT/fence.txt 2>&1; echo "rc $?" >> $OUT/fence.txt) &
(CUMBE_BSYNC=aligned timeout 200 $T > $OUT/aligned.txt 2>&1; echo "rc $?" >> $OUT/aligned.txt) &
timeout 250 python3 .devrun/sass.py > $OUT/sass.log 2>&1 &
wait
for f in fence aligned; do echo "== $f"; grep -E "CHILD|^rc" $OUT/$f.txt; done
for tool in initcheck memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --print-limit 4 $T > $OUT/$tool.txt 2>&1
  echo "== $tool rc $?"; grep -oE "\+0x[0-9a-f]+ in|by thread \([0-9]+|Race reported between [A-Za-z]+ access|and [A-Za-z]+ access at|\[[0-9]+ hazards\]|ERROR SUMMARY.*" $OUT/$tool.txt | head -24 | tr '\n' ' '; echo
done
python3 .devrun/where.py $OUT/sass.txt $OUT/initcheck.txt $OUT/memcheck.txt $OUT/racecheck.txt
