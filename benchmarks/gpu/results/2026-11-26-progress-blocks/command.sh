set -u
. benchmarks/gpu/device_env.sh
R=/tmp/red; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
TT=$PWD/benchmarks/gpu/results/2026-11-26-progress-blocks/time_tree.py
(cd .split && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-split timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-split.jsonl 2>&1) &
timeout 200 python3 benchmarks/gpu/warm.py --jobs 7 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 noRS-instr:128 > $R/warm-new.jsonl 2>&1 &
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.25 --out /tmp/g > /dev/null
wait; el warm done; cat $R/warm-new.jsonl
G=/tmp/g/IMDB-actor-hard-s1-x0.25.csr
M=".csr/brunson_corporate-leadership.csr .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/dbpedia-occupation.csr .csr/movielens-10m_ti.csr .csr/movielens-10m_ut.csr .csr/marvel.csr .csr/movielens-10m_ui.csr .csr/youtube-groupmemberships.csr .csr/edit-nawiki.csr"
t() { # tree tag reps graphs...
  local tr=$1; shift
  if [ $tr = split ]; then (cd .split && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-split CUMBE_PROGRESS_S=1000 timeout 120 python3 $TT "$@" >> $R/runs.jsonl 2>>$R/err.log)
  else CUMBE_PROGRESS_S=1000 timeout 120 python3 $TT "$@" >> $R/runs.jsonl 2>>$R/err.log; fi
  el "$@" | cut -c1-60
}
for rnd in 1 2; do
  t split split 1 $G; t new new 1 $G
  t split split 7 $(for m in $M; do echo $PWD/$m; done); t new new 7 $M
done
python3 - $R/runs.jsonl <<'PY' | tee $R/table.txt
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r["graph"], {}).setdefault(r["tree"], []).append(r["median_s"])
print(f"{'graph':32} split(r1,r2) new(r1,r2) new/split")
for g, d in by.items():
    s, n = d.get("split", []), d.get("new", [])
    if s and n:
        print(f"{g:32} {' '.join(f'{x:.5f}' for x in s)}  {' '.join(f'{x:.5f}' for x in n)}  {statistics.mean(n)/statistics.mean(s):.4f}")
bad = [r for r in rows if r["reference_ok"] is False]
counts = {}
for r in rows: counts.setdefault(r["graph"], set()).add((r["count"], r["fp"]))
print("reference mismatches:", len(bad), "; graphs whose trees disagree:", [g for g, c in counts.items() if len(c) > 1])
PY
CUMBE_PROGRESS_S=2 timeout 60 python3 -m cumbe run $G > $R/progress-run.json 2> $R/progress-lines.txt; el progress run; tail -4 $R/progress-lines.txt
timeout 80 python3 -m cumbe.selfcheck --variants cuMBE,noRS --examples 40 --blocks 1,2,7,0 --time-limit 60 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -2 $R/selfcheck.log; el selfcheck
tar -czf $OUT/red.tar.gz -C /tmp red
