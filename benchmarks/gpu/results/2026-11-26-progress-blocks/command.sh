set -u
. benchmarks/gpu/device_env.sh
R=/tmp/red; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
(cd .split && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-split timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-split.jsonl 2>&1) &
timeout 200 python3 benchmarks/gpu/warm.py --jobs 7 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 noRS-instr:128 > $R/warm-new.jsonl 2>&1 &
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.25 --out /tmp/g > /dev/null
wait; el warm done; cat $R/warm-new.jsonl
G=/tmp/g/IMDB-actor-hard-s1-x0.25.csr
# (as run: the same steps inline; benchmarks/gpu/ab_trees.sh holds them now)
bash benchmarks/gpu/ab_trees.sh .split split $R $G \
  .csr/brunson_corporate-leadership.csr .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ui.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr
CUMBE_PROGRESS_S=2 timeout 60 python3 -m cumbe run $G > $R/progress-run.json 2> $R/progress-lines.txt; el progress run; tail -4 $R/progress-lines.txt
timeout 80 python3 -m cumbe.selfcheck --variants cuMBE,noRS --examples 40 --blocks 1,2,7,0 --time-limit 60 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -2 $R/selfcheck.log; el selfcheck
tar -czf $OUT/red.tar.gz -C /tmp red
