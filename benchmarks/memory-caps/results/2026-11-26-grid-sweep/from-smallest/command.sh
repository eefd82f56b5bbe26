# one call (nvidia-h100-x1, carry .whl .devrun), tree f63f972: IMDB-actor-blocks from its smallest cap up
. benchmarks/gpu/device_env.sh
R=$OUT/mult; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python3 benchmarks/gpu/warm.py --jobs 2 cuMBE:128 cuMBE-compact:128 > $R/warm.jsonl 2>&1
el warm
timeout 400 python3 benchmarks/memory-caps/sweep.py --out $R --paper-sized IMDB-actor-blocks \
  --caps smallest*2,smallest*3,smallest*4,smallest*5,none --repeats 1 --run-limit 60 --budget 380 2>&1 | tail -8
el done
