# One device call (nvidia-h100-x1), from the repo root, carry [".whl", ".base", ".csr"]:
#   bash benchmarks/shards/results/2026-11-26-pieces-gpu/command.sh
# .base: `git archive f800951 cumbe mbebench benchmarks/gpu/warm.py benchmarks/gpu/device_env.sh`
# (the tree before tasks in pieces); .csr: the mirror graphs (benchmarks/mirror.py).
set -u
. benchmarks/gpu/device_env.sh
R=/tmp/pc; mkdir -p $R
# (as run: the warm-up steps inline, with its own el(); warm_two_trees.sh and device_env.sh hold them now)
bash benchmarks/gpu/warm_two_trees.sh .base base $R; el warm done
G=/tmp/g/IMDB-actor-hard-s1-x0.25.csr
# (as run: the same steps inline; benchmarks/gpu/ab_trees.sh holds them now)
bash benchmarks/gpu/ab_trees.sh .base base $R $G \
  .csr/brunson_corporate-leadership.csr .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ui.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr
el timing done
CUMBE_PROGRESS_S=1000 timeout 200 python3 benchmarks/shards/pieces_gpu.py --shards 7 --pieces 4 /tmp/g/crown-24.csr $G .csr/marvel.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr .csr/movielens-10m_ui.csr .csr/dbpedia-occupation.csr > $R/pieces.jsonl 2> $R/pieces.err; echo "pieces rc $?"; cut -c1-400 $R/pieces.jsonl; tail -3 $R/pieces.err; el pieces done
timeout 170 python3 -m cumbe.selfcheck --variants cuMBE,noES,noWS,noRS --examples 80 --dense 30 --blocks 1,2,7,0 --time-limit 140 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -2 $R/selfcheck.log | cut -c1-600; el selfcheck
cp -r $R $OUT/
