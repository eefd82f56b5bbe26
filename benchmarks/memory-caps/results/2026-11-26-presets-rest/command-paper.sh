set -u
. benchmarks/gpu/device_env.sh
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 benchmarks/gpu/warm.py cuMBE:128 > /dev/null 2>&1; el warm
timeout 200 python3 benchmarks/memory-caps/sweep.py --out $OUT/paper --paper-sized DBLP-author,IMDB-actor-blocks --caps 0.25,0.5,1,2,8,none --repeats 1 --budget 185 --run-limit 40 > $OUT/paper.log 2>&1; echo "paper rc $?"; tail -14 $OUT/paper.log; el paper
cd $OUT && tar czf sweep17.tgz presets paper presets.log paper.log && rm -rf presets paper
