#!/usr/bin/env bash
# One device call for a cuMBE change: warm the kernel cache and generate the stand-ins
# (CPU, in parallel), then on the GPU the steps named in STEPS (default: all, in order):
#   oracle  the oracle check (every variant, grids 1/2/7/max)
#   before  the previous engine (.old/, a `git archive`) on the mirror datasets (.csr/)
#   after   this engine on the same
#   scale   the stand-ins against 16-process ParMBE, memory caps on the largest
#   sweep   a launch-parameter sweep
# Each step has its own time limit (ORACLE_S, OLD_S, NEW_S, SCALE_S, SWEEP_S).
# Carry: .whl (numpy 2.4 cp312 wheel), .csr, .old.  Results under $OUT.
set -u
. "$(dirname "$0")/device_env.sh"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
git log -1 --format=%H > "$OUT/commit.txt" 2>/dev/null
python3 benchmarks/gpu/warm.py --jobs 8 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 \
  noWS-instr:128 > "$OUT/warm.jsonl" 2>&1 &
STANDINS=${STANDINS:-"YouTube BookCrossing stackoverflow IMDB-actor DBLP-author DBpedia_locations BookCrossing-blocks stackoverflow-g2.2"}
for p in $STANDINS; do
  python3 benchmarks/standins.py --preset "$p" --seed 1 --out /tmp/standins > /dev/null 2>&1 &
done
wait
STEPS=${STEPS:-"oracle before after scale sweep"}
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
# 1. correctness on the GPU
has oracle && timeout "${ORACLE_S:-100}" python3 benchmarks/gpu/verify_and_time.py --out "$OUT/oracle" \
  --budget "${ORACLE_S:-100}" --examples "${EXAMPLES:-32}" --datasets none \
  --skip grids,variants,instr,side > "$OUT/oracle.log" 2>&1
# 2. before / after on the mirror datasets, same machine, same call
has before && (cd .old && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-old timeout "${OLD_S:-110}" \
  python3 benchmarks/gpu/verify_and_time.py --out "$OUT/old" --csr-dir ../.csr \
  --budget "${OLD_S:-110}" --repeats 3 --skip oracle,grids,variants,instr,side) > "$OUT/old.log" 2>&1
has after && timeout "${NEW_S:-60}" python3 benchmarks/gpu/verify_and_time.py --out "$OUT/new" \
  --budget "${NEW_S:-60}" --repeats 3 --skip oracle,grids,variants,instr,side > "$OUT/new.log" 2>&1
# 3. the stand-ins against 16-process ParMBE; memory caps on the largest
PRESETS=$(echo $STANDINS | tr ' ' ',')
# the real graphs of benchmarks/gpu/README.md
MIRROR=${MIRROR-$(for n in brunson_corporate-leadership unicodelang opsahl-ucforum movielens-10m_ut \
  marvel movielens-10m_ti dbpedia-occupation movielens-10m_ui youtube-groupmemberships edit-nawiki; \
  do printf '.csr/%s.csr,' $n; done)}
has scale && timeout "${SCALE_S:-300}" python3 benchmarks/gpu/scale.py --out "$OUT/scale" --presets "$PRESETS" \
  --budget "${SCALE_S:-300}" --parmbe "${PARMBE:-16}" --cap-gib "${CAP:-24,1}" --cap-presets DBLP-author,IMDB-actor \
  --mirror "$MIRROR" > "$OUT/scale.log" 2>&1
# 4. sweep with the time left
has sweep && timeout "${SWEEP_S:-40}" python3 benchmarks/gpu/sweep.py "$OUT/sweep" "${SWEEP_S:-40}" \
  > "$OUT/sweep.log" 2>&1
for f in oracle old new scale sweep; do [ -f "$OUT/$f.log" ] && { echo "== $f"; tail -24 "$OUT/$f.log"; }; done
