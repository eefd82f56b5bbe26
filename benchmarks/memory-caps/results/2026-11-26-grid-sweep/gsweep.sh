# one call: nvidia-h100-x1, carry .whl .csr .devrun; trees under .devrun/trees/{H,LC}
. benchmarks/gpu/device_env.sh
R=$OUT/gs; mkdir -p $R /tmp/g
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for t in H LC; do
  (cd .devrun/trees/$t && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-$t.txt 2>&1) &
done
for p in IMDB-actor-blocks DBLP-author BookCrossing-blocks stackoverflow-blocks YouTube-blocks; do
  (cd .devrun/trees/H && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 benchmarks/standins.py --preset $p --seed 1 --scale 1.0 --out /tmp/g > /dev/null 2>> $R/gen.err) &
done
wait; el warm+gen; ls /tmp/g; tail -n 2 $R/warm-*.txt | cut -c1-200
GS=$PWD/.devrun/gsweep.py
run() { # graph caps R
  for t in H LC; do
    (cd .devrun/trees/$t && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t CUMBE_PROGRESS_S=1000 timeout 150 python3 $GS $R/gs.jsonl $t /tmp/g/$1 $2 $3 2>> $R/err.log | grep '^#')
    el "$t $1 $2"
  done
}
run IMDB-actor-blocks-s1-x1.csr 1.0 1
run DBLP-author-s1-x1.csr 1.0,2.0 1
run BookCrossing-blocks-s1-x1.csr 1.0,0.5,0.25 1
run stackoverflow-blocks-s1-x1.csr 1.0,0.5 1
run YouTube-blocks-s1-x1.csr 0.5,0.25 2
run IMDB-actor-blocks-s1-x1.csr 0.5 1
el done
