# One device call (nvidia-h100-x1, carry [".whl", ".csr"], repo root, tree 9ddf991).
set -u
. benchmarks/gpu/device_env.sh
nvidia-smi -L
timeout 150 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 | cut -c1-120; el warm
P=$(python3 -c "import sys; sys.path[:0]=['.','benchmarks']; import standins; n=standins.preset_names(); print(','.join(n[:n.index('IMDB-actor-hard')+1]))")
M=".csr/brunson_corporate-leadership.csr .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ui.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr"
timeout 500 python3 benchmarks/memory-caps/sweep.py --out $OUT/first --mirror $M --standins $P --seeds 1,2,3 --scale 0.05 \
  --caps smallest,0.25,0.5,1,2,8,none --repeats 1 --budget 440 --run-limit 4 > $OUT/first.log 2>&1; echo "rc $?"
tail -3 $OUT/first.log; el done
