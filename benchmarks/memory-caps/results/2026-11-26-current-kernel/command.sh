set -u
. benchmarks/gpu/device_env.sh
T0=$(date +%s)
timeout 60 python3 benchmarks/gpu/warm.py --jobs 2 cuMBE:128 > $OUT/warm.jsonl 2>&1
timeout 250 python3 benchmarks/memory-caps/sweep.py --out $OUT/sweep --mirror .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/marvel.csr .csr/youtube-groupmemberships.csr --standins BookCrossing-blocks,YouTube-blocks --seeds 1,2,3 --scale 0.05 --caps smallest,0.25,0.5,1,8,none --repeats 2 --budget 230 --run-limit 20 > $OUT/sweep.log 2>&1; echo "sweep rc $?"; tail -40 $OUT/sweep.log
LEFT=$(( 540 - $(date +%s) + T0 ))
timeout $LEFT python3 benchmarks/memory-caps/memcheck.py --out $OUT/memcheck --graphs .csr/unicodelang.csr,.csr/brunson_corporate-leadership.csr,.csr/opsahl-ucforum.csr --standins BookCrossing-blocks --scale 0.02 --caps smallest,0.1,0.25 --limit 60 --budget $(( LEFT - 20 )) > $OUT/memcheck.log 2>&1; echo "memcheck rc $?"; tail -16 $OUT/memcheck.log
