# One device call (nvidia-h100-x1), from the repo root, carry [".whl", ".csr", ".base", ".devrun"]:
# .base = `git archive eddebb2 cumbe mbebench benchmarks/gpu/warm.py benchmarks/gpu/device_env.sh`;
# the tree was the first version of the change (not committed).
set -u
. benchmarks/gpu/device_env.sh
R=/tmp/dd; mkdir -p $R
# (as run: the warm-up steps inline, with its own el(); warm_two_trees.sh and device_env.sh hold them now)
bash benchmarks/gpu/warm_two_trees.sh .base eddebb2 $R; el warm done
G=/tmp/g/IMDB-actor-hard-s1-x0.25.csr
M=".csr/brunson_corporate-leadership.csr .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ui.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr"
bash benchmarks/gpu/ab_trees.sh $PWD/.base eddebb2 $R/ab $G $M; el timing done
CUMBE_PROGRESS_S=1000 timeout 150 python3 benchmarks/shards/pieces_gpu.py --shards 7 --pieces 4 /tmp/g/crown-24.csr $G .csr/marvel.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr .csr/movielens-10m_ui.csr .csr/dbpedia-occupation.csr > $R/pieces.jsonl 2> $R/pieces.err; echo "pieces rc $?"; cut -c1-300 $R/pieces.jsonl; tail -3 $R/pieces.err; el pieces done
timeout 150 python3 -m cumbe.selfcheck --variants cuMBE,noES,noWS,noRS --examples 80 --dense 30 --blocks 1,2,7,0 --time-limit 130 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -2 $R/selfcheck.log | cut -c1-600; el selfcheck
cd /tmp && tar czf $OUT/dd.tgz dd
