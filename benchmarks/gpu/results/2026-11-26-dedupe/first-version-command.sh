set -u
. benchmarks/gpu/device_env.sh
R=/tmp/dd; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $R/gpu.txt
(cd .base && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-eddebb2 timeout 220 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-base.jsonl 2>&1) &
timeout 220 python3 benchmarks/gpu/warm.py --jobs 15 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 noRS-instr:128 noES-instr:128 cuMBE-pieces:128 noES-pieces:128 noWS-pieces:128 cuMBE-instr-pieces:128 noES-instr-pieces:128 noWS-instr-pieces:128 > $R/warm-new.jsonl 2>&1 &
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.25 --out /tmp/g > /dev/null
python3 benchmarks/standins.py --crown 24 --out /tmp/g > /dev/null
wait; el warm done; cat $R/warm-new.jsonl $R/warm-base.jsonl | cut -c1-160
G=/tmp/g/IMDB-actor-hard-s1-x0.25.csr
M=".csr/brunson_corporate-leadership.csr .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ui.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr"
bash benchmarks/gpu/ab_trees.sh $PWD/.base eddebb2 $R/ab $G $M; el timing done
CUMBE_PROGRESS_S=1000 timeout 150 python3 benchmarks/shards/pieces_gpu.py --shards 7 --pieces 4 /tmp/g/crown-24.csr $G .csr/marvel.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr .csr/movielens-10m_ui.csr .csr/dbpedia-occupation.csr > $R/pieces.jsonl 2> $R/pieces.err; echo "pieces rc $?"; cut -c1-300 $R/pieces.jsonl; tail -3 $R/pieces.err; el pieces done
timeout 150 python3 -m cumbe.selfcheck --variants cuMBE,noES,noWS,noRS --examples 80 --dense 30 --blocks 1,2,7,0 --time-limit 130 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -2 $R/selfcheck.log | cut -c1-600; el selfcheck
cd /tmp && tar czf $OUT/dd.tgz dd
