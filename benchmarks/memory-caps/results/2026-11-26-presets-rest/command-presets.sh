set -u
. benchmarks/gpu/device_env.sh
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 benchmarks/gpu/warm.py cuMBE:128 > /dev/null 2>&1; el warm
P=$(python3 -c "import sys; sys.path[:0]=['.','benchmarks']; import standins; n=standins.preset_names(); print(','.join(n[n.index('IMDB-actor-hard')+1:]))")
timeout 480 python3 benchmarks/memory-caps/sweep.py --out $OUT/presets --standins $P --seeds 1,2,3 --scale 0.05 --repeats 1 --budget 460 --run-limit 4 > $OUT/presets.log 2>&1; echo "presets rc $?"; tail -30 $OUT/presets.log | cut -c1-250; el presets
cd $OUT && tar czf presets.tgz presets presets.log && rm -rf presets
