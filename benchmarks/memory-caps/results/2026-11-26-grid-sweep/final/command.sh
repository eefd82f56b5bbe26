# One device call (nvidia-h100-x1, carry [".whl", ".csr", ".devrun", ".old"]), repo root.
# .old = git archive 3e0c1e2 cumbe mbebench (before this change).
. benchmarks/gpu/device_env.sh
R=$OUT/final; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python3 benchmarks/gpu/warm.py --jobs 8 cuMBE:128 cuMBE-compact:128 cuMBE-instr:128 cuMBE-instr-compact:128 cuMBE-pieces:128 cuMBE-pieces-compact:128 cuMBE-instr-pieces:128 cuMBE-instr-pieces-compact:128 > $R/warm.jsonl 2>&1 &
(cd .old && PYTHONPATH=/tmp/site:$PWD timeout 120 python3 -c "
from cumbe import kernel as K, buffers as B
from numba import cuda
k = K.build(); k.compile(tuple(k.typeof_pyval(x) for x in B.typing_dummies(cuda))); print('old warm')" > $R/warm-old.txt 2>&1) &
wait; el warm; cut -c1-200 $R/warm.jsonl $R/warm-old.txt
# the oracle on the GPU: cuMBE (its eight builds warmed above), grids 1, 2, 7 and the largest; half the runs in the
# compact layout's build, every other case with block-wide tasks
timeout 95 python3 -m cumbe.selfcheck --variants cuMBE --examples 40 --blocks 1,2,7,0 --time-limit 80 --regressions 0 > $R/selfcheck.json 2> $R/selfcheck.err
tail -c 600 $R/selfcheck.json; el selfcheck
M=".csr/marvel.csr .csr/edit-nawiki.csr .csr/movielens-10m_ui.csr .csr/movielens-10m_ti.csr .csr/youtube-groupmemberships.csr .csr/dbpedia-occupation.csr"
P=IMDB-actor-blocks,DBLP-author,BookCrossing-blocks,stackoverflow-blocks,YouTube-blocks
timeout 235 python3 benchmarks/memory-caps/sweep.py --out $R/new --mirror $M --paper-sized $P \
  --caps none,8,2,1,0.5,0.25 --repeats 1 --run-limit 30 --budget 210 2>&1 | tail -16
el new
timeout 115 python3 benchmarks/memory-caps/sweep.py --out $R/old --root .old --mirror .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr --paper-sized IMDB-actor-blocks,YouTube-blocks \
  --caps none,2,1,0.5,0.25 --repeats 1 --run-limit 30 --budget 95 2>&1 | tail -8
el old
timeout 50 python3 benchmarks/memory-caps/memcheck.py --out $R/memcheck \
  --graphs .csr/unicodelang.csr,.csr/opsahl-ucforum.csr,.csr/brunson_corporate-leadership.csr \
  --caps smallest,0.1 --limit 20 --budget 40 2>&1 | tail -8
el memcheck
