# one call (nvidia-h100-x1, carry .whl .devrun), tree ec4e7cb: every stand-in preset (5 %, seeds
# 1-2) from the smallest cap up, on the final code (compact layout and search-aware grid)
. benchmarks/gpu/device_env.sh
R=$OUT/presets; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
python3 benchmarks/gpu/warm.py --jobs 2 cuMBE:128 cuMBE-compact:128 > $R/warm.jsonl 2>&1
el warm
timeout 530 python3 benchmarks/memory-caps/sweep.py --out $R --standins all --seeds 1,2 --scale 0.05 \
  --caps smallest,0.1,0.25,1,none --repeats 1 --run-limit 4 --budget 500 2>&1 | tail -4
el done
