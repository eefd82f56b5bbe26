#!/usr/bin/env bash
# Two checkouts on one GPU machine: same machine code (tools/kernel_text.py), then the
# seconds beside the algorithm of `python -m cumbe run` and of ParMBE (measure.py): the old
# checkout, the new one on its earlier paths (MBEBENCH_FAST_LAUNCH=0: cuMBE's kernel through
# numba; MBEBENCH_BENCH_FORKSERVER=1: ParMBE's workers from a forkserver) and the new one.
#
#   bash benchmarks/overhead/run.sh OLD_CHECKOUT NEW_CHECKOUT CSR_DIR OUT_DIR
#
# OLD_CHECKOUT may be NEW_CHECKOUT (no other checkout at hand): then no machine code is
# compared, and "before" is the new checkout on its earlier paths.
# CSR_DIR: converted graphs (python -m mbebench convert ...); every *.csr there is timed, and
# PARMBE_GRAPH (default the first of them) for ParMBE too.  Env: STANDIN (default
# DBLP-author:0.8, ~10 M edges, generated into WORK, default /tmp/overhead-work), PARMBE_P
# (16), BUILDS (cuMBE noRS noES noWS).
set -euo pipefail
OLD=$(cd "$1" && pwd) NEW=$(cd "$2" && pwd) CSR=$(cd "$3" && pwd)
mkdir -p "$4" && DEST=$(cd "$4" && pwd)
STANDIN=${STANDIN:-DBLP-author:0.8} PARMBE_P=${PARMBE_P:-16} WORK=${WORK:-/tmp/overhead-work}
BUILDS=${BUILDS:-cuMBE noRS noES noWS}
PY=${PYTHON:-python3}
if [ -z "${CUDA_HOME:-}" ]; then
  CUDA_HOME=$(dirname "$(dirname "$(command -v ptxas || command -v nvcc)")")
fi
export CUDA_HOME
GRAPHS=("$CSR"/*.csr)
PARMBE_GRAPH=${PARMBE_GRAPH:-${GRAPHS[0]}}
mkdir -p "$WORK"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$DEST/gpu.txt"

# 1. machine code of every build in both checkouts, one process each; meanwhile the first
#    run of each checkout fills numba's caches (kernel, preparation, ParMBE; ParMBE's
#    ahead-of-time kernels are built there)
pids=()
[ "$OLD" = "$NEW" ] && BUILDS=""
for b in $BUILDS; do
  for t in old new; do
    dir=$([ $t = old ] && echo "$OLD" || echo "$NEW")
    (cd "$dir" && PYTHONPATH="$dir:${PYTHONPATH:-}" $PY tools/kernel_text.py "$b" \
      > "$DEST/fp-$t-$b.txt" 2>&1) & pids+=($!)
  done
done
for dir in $(printf '%s\n' "$OLD" "$NEW" | sort -u); do
  (cd "$dir" && PYTHONPATH="$dir:${PYTHONPATH:-}" $PY -m cumbe run "${GRAPHS[0]}" >/dev/null 2>&1
   PYTHONPATH="$dir:${PYTHONPATH:-}" $PY -c \
     "from baselines.parmbe_plan import warm_up; warm_up()") & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
echo "== machine code (.text of each build; equal = same code)" | tee "$DEST/fingerprints.md"
same=1
for b in $BUILDS; do
  o=$(awk '{print $2, $3, $4, $5, $6}' "$DEST/fp-old-$b.txt" | tail -1)
  n=$(awk '{print $2, $3, $4, $5, $6}' "$DEST/fp-new-$b.txt" | tail -1)
  [ -n "$o" ] && [ "$o" = "$n" ] && eq=equal || { eq=DIFFERENT; same=0; }
  echo "$b old: $o | new: $n | $eq" | tee -a "$DEST/fingerprints.md"
done

# 2. seconds beside the algorithm, warm (the last of two runs); counts and fingerprints must
#    agree between the checkouts (measure.py exits 1 otherwise)
TREES=(--tree "before=$NEW:MBEBENCH_FAST_LAUNCH=0,MBEBENCH_BENCH_FORKSERVER=1" --tree "after=$NEW")
[ "$OLD" != "$NEW" ] && TREES=(--tree "old=$OLD" "${TREES[@]}")
$PY "$NEW/benchmarks/overhead/measure.py" "${TREES[@]}" \
  $(for g in "${GRAPHS[@]}"; do echo --graph "$g"; done) --standin "$STANDIN" \
  --parmbe "$PARMBE_P" --parmbe-graph "$PARMBE_GRAPH" --work "$WORK" \
  --out "$DEST/overhead.json" | tee "$DEST/overhead.md"
[ $same = 1 ]
