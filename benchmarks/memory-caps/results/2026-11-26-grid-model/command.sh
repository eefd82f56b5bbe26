# Two device calls (nvidia-h100-x1, carry [".whl", ".devrun", ".csr"], from the repo root;
# wide.py and gridab.py were in .devrun/). Tree: 2b5dc6d+ (the chooser of cumbe/grid.py before
# the model; both scripts swap the rule in by monkeypatching, so one tree measures both).
. benchmarks/gpu/device_env.sh
python3 benchmarks/gpu/warm.py cuMBE:128 > /dev/null 2>&1
# 1. the chooser's pick against always taking the block-wide plan (cumbe.grid._block_wide),
#    four paper-sized stand-ins with planted blocks, caps none/1/0.5/0.25 GiB
CUMBE_PROGRESS_S=1000 timeout 480 python3 .devrun/wide.py $OUT/wide.jsonl \
  YouTube-blocks,BookCrossing-blocks,stackoverflow-blocks,IMDB-actor-blocks
# 2. the rule before against the model's first form (BLOCK_WIDE_COST = 7, no share threshold)
#    on every (graph, cap) pair of the memory-cap sweep where they differ, plus the four above
CUMBE_PROGRESS_S=1000 timeout 500 python3 .devrun/gridab.py $OUT/gridab.jsonl
