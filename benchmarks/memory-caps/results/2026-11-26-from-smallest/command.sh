# One device call (nvidia-h100-x1, carry [".whl", ".csr"], repo root, tree 93947d9 + sweep.py's smallest*F).
. benchmarks/gpu/device_env.sh
nvidia-smi -L
timeout 150 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 | cut -c1-150
el warm
python3 benchmarks/memory-caps/sweep.py --out $OUT/mult --paper-sized BookCrossing-blocks,stackoverflow-blocks,IMDB-actor-blocks,YouTube-blocks,DBLP-author \
  --mirror .csr/marvel.csr .csr/edit-nawiki.csr \
  --caps smallest,smallest*1.25,smallest*1.5,smallest*2,smallest*3,smallest*5,none --repeats 1 --run-limit 12 --budget 470 2>&1 | grep -v Warning | tail -30
el done
