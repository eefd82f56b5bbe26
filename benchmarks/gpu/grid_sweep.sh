#!/usr/bin/env bash
# One device call: grid size (blocks) against kernel time, for this engine and for the
# engine in .head/ (a `git archive` of the commit to compare with), on the mirror graphs and
# stand-ins.  Carry: .whl, .csr, .head.  BLOCKS, OLD_BLOCKS, GRAPHS, STANDINS override.
set -u
. "$(dirname "$0")/device_env.sh"
git log -1 --format=%H > "$OUT/commit.txt" 2>/dev/null
STANDINS=${STANDINS:-"YouTube BookCrossing IMDB-actor"}
for p in $STANDINS; do
  python3 benchmarks/standins.py --preset "$p" --seed 1 --out /tmp/standins > /dev/null 2>&1 &
done
python3 benchmarks/gpu/warm.py --jobs 2 \
  cuMBE:128 > "$OUT/warm.jsonl" 2>&1 &
[ -d .head ] && (cd .head && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-head \
  python3 benchmarks/gpu/warm.py --jobs 2 cuMBE:128 > "$OUT/warm-head.jsonl" 2>&1) &
wait
GRAPHS=${GRAPHS:-$(for n in brunson_corporate-leadership unicodelang opsahl-ucforum movielens-10m_ut \
  marvel movielens-10m_ti dbpedia-occupation movielens-10m_ui youtube-groupmemberships edit-nawiki; \
  do printf '%s/.csr/%s.csr,' "$PWD" $n; done; ls /tmp/standins/*.csr | tr '\n' ',')}
GRAPHS=${GRAPHS%,}
cfg() { python3 -c "import json,sys; print(json.dumps([{'blocks': int(b)} for b in sys.argv[1].split()]))" "$1"; }
[ -d .head ] && (cd .head && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-head timeout "${OLD_S:-150}" \
  python3 benchmarks/gpu/sweep.py "$OUT/head" "${OLD_S:-150}" "$(cfg "${OLD_BLOCKS:-264 1056}")" "$GRAPHS") \
  > "$OUT/head.log" 2>&1
timeout "${NEW_S:-250}" python3 benchmarks/gpu/sweep.py "$OUT/new" \
  "${NEW_S:-250}" "$(cfg "${BLOCKS:-132 264 396 528 1056}")" "$GRAPHS" > "$OUT/new.log" 2>&1
for f in head new; do echo "== $f"; grep -o "'dataset': '[^']*', 'blocks': [0-9]*, 'kernel_s': [0-9.e-]*, 'ok': [A-Za-z]*" "$OUT/$f.log"; done
