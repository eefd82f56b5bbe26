# One device call (kind nvidia-h100-x1, carry [".whl"], limit 600 s; 169 s), from the repo root of
# the working tree at 38dde3a (the copy's `git log`, commit.txt, was stale: not kept):
STEPS="scale" STANDINS="YouTube BookCrossing stackoverflow IMDB-actor DBLP-author" SCALE_S=440 \
  MIRROR="" CAP=24 OUT=$OUT bash benchmarks/gpu/device.sh
