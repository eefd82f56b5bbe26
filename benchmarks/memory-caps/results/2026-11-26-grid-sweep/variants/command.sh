# one call (nvidia-h100-x1, carry .whl .csr .devrun), tree 4b096f4: the ablation variants'
# builds, compact layout included, against the oracle on the GPU, and noRS under caps
. benchmarks/gpu/device_env.sh
R=$OUT/variants; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
timeout 200 python3 benchmarks/gpu/warm.py --jobs 16  noRS:128 noRS-compact:128 noRS-pieces:128 noRS-pieces-compact:128 noRS-instr:128 noRS-instr-compact:128 noRS-instr-pieces:128 noRS-instr-pieces-compact:128 noES:128 noES-compact:128 noES-pieces:128 noES-pieces-compact:128 noES-instr:128 noES-instr-compact:128 noES-instr-pieces:128 noES-instr-pieces-compact:128 noWS:128 noWS-compact:128 noWS-pieces:128 noWS-pieces-compact:128 noWS-instr:128 noWS-instr-compact:128 noWS-instr-pieces:128 noWS-instr-pieces-compact:128 > $R/warm.jsonl 2>&1
el warm; grep -c compile_s $R/warm.jsonl
timeout 170 python3 -m cumbe.selfcheck --variants noRS,noES,noWS --examples 30 --blocks 1,2,7,0 --time-limit 150 > $R/selfcheck.json 2> $R/selfcheck.err
tail -c 400 $R/selfcheck.json; tail -c 600 $R/selfcheck.err; el selfcheck
timeout 150 python3 benchmarks/memory-caps/sweep.py --out $R/sweep --variant noRS --mirror .csr/marvel.csr .csr/movielens-10m_ut.csr .csr/opsahl-ucforum.csr .csr/unicodelang.csr \
  --caps smallest*3,0.25,0.1,none --repeats 1 --run-limit 30 --budget 130 2>&1 | tail -10
el sweep
