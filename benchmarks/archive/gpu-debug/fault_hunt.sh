#!/usr/bin/env bash
# One device call: find the block-wide task that faults (block_wide_bisect.py), run it under
# compute-sanitizer with full debug info (CUMBE_DEBUGINFO=1: the source line of the faulting
# access), and probe where Marvel-like graphs spend their time (tail_probe.py).
# Carry: .whl (numpy 2.4 cp312 wheel), .csr.  GRAPH, AW, TAIL_GRAPHS override the defaults.
set -u
. "$(dirname "$0")/../../gpu/device_env.sh"
GRAPH=${GRAPH:-.csr/marvel.csr}
AW=${AW:-2496}
git log -1 --format=%H > "$OUT/commit.txt" 2>/dev/null
python3 benchmarks/gpu/warm.py --jobs 4 cuMBE:128 cuMBE-instr:128 noWS:128 > "$OUT/warm.jsonl" 2>&1
STEPS=${STEPS:-"bisect sanitize tail"}
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
has bisect && timeout "${BISECT_S:-200}" python3 benchmarks/archive/gpu-debug/block_wide_bisect.py "$GRAPH" "$AW" \
  --tries 1 --budget "$(( ${BISECT_S:-200} - 40 ))" --out "$OUT/bisect.json" > "$OUT/bisect.log" 2>&1
TAIL_GRAPHS=${TAIL_GRAPHS:-.csr/marvel.csr,.csr/movielens-10m_ut.csr,.csr/brunson_corporate-leadership.csr}
has tail && timeout "${TAIL_S:-120}" python3 benchmarks/archive/gpu-debug/tail_probe.py "$OUT/tail.json" \
  "$TAIL_GRAPHS" > "$OUT/tail.log" 2>&1
if has sanitize && [ -f "$OUT/bisect.json" ]; then
  # the smallest launch that faulted: the task alone on one block, alone on the grid, or
  # the interval with the warp tasks
  ARGS=$(python3 - "$OUT/bisect.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["found"][0] if d["found"] else None
if f and f["alone_one_block_faults"]:
    print(f["j"], f["j"] + 1, "--warp-tasks none --blocks 1")
elif f and f["alone_full_grid_faults"]:
    print(f["j"], f["j"] + 1, "--warp-tasks none --blocks 0")
else:
    print(d["lo"], d["hi"], "--warp-tasks all --blocks 0")
PY
)
  echo "sanitize: --child $ARGS" > "$OUT/sanitizer.txt"
  CUMBE_DEBUGINFO=1 timeout "${SAN_S:-150}" compute-sanitizer --tool memcheck --print-limit 3 \
    --show-backtrace device python3 benchmarks/archive/gpu-debug/block_wide_bisect.py "$GRAPH" "$AW" \
    --child $ARGS >> "$OUT/sanitizer.txt" 2>&1
fi
for f in bisect.log sanitizer.txt tail.log; do [ -f "$OUT/$f" ] && { echo "== $f"; head -c 6000 "$OUT/$f"; echo; }; done
