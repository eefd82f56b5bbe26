# One device call (nvidia-h100-x1), repo root, carry [".whl", ".csr", ".split", ".head"]:
# .split = git archive 71c469a (no progress counters at all), .head = git archive 45ba250
# (progress, the host polling the end event), this tree = a thread waits in its synchronize.
set -u
. benchmarks/gpu/device_env.sh
R=$OUT/p; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
tree() { case $1 in split) echo $PWD/.split;; head) echo $PWD/.head;; new) echo $PWD;; esac; }
for v in split head new; do
  (cd $(tree $v) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$v timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-$v.jsonl 2>&1) &
done
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.1 --out /tmp/g > /dev/null
wait; el warm; cat $R/warm-*.jsonl | cut -c1-120
G="$PWD/.csr/unicodelang.csr $PWD/.csr/brunson_corporate-leadership.csr $PWD/.csr/opsahl-ucforum.csr $PWD/.csr/dbpedia-occupation.csr $PWD/.csr/movielens-10m_ti.csr $PWD/.csr/marvel.csr $PWD/.csr/movielens-10m_ui.csr"
P=$PWD/benchmarks/gpu/results/2026-11-26-progress-wait/probe_prog.py
for rnd in 1 2 3; do
  for tm in split:plain head:plain new:plain new:np; do
    t=${tm%%:*}; m=${tm##*:}
    (cd $(tree $t) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t CUMBE_PROGRESS_S=1000 timeout 60 python3 $P $t-$m 21 $G >> $R/runs.jsonl 2>> $R/err.log)
  done
  el round $rnd
done
# the progress lines still come (the thread waits, the host prints), and the stand-in's count
CUMBE_PROGRESS_S=0.5 timeout 60 python3 -m cumbe run /tmp/g/IMDB-actor-hard-s1-x0.1.csr > $R/progress-run.json 2> $R/progress-lines.txt; echo "progress run rc $?"; head -3 $R/progress-lines.txt; tail -2 $R/progress-lines.txt; cut -c1-300 $R/progress-run.json
python3 - $R/runs.jsonl <<'PY' | tee $R/table.txt
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
modes = list(dict.fromkeys(r["mode"] for r in rows)); graphs = list(dict.fromkeys(r["graph"] for r in rows))
print("median over 3 rounds of each process's median of 21 launches, kernel ms")
print(f"{'graph':30}" + "".join(f"{m:>13}" for m in modes) + "   new/split  head/split")
for g in graphs:
    v = {m: statistics.median([r["median_s"] for r in rows if r["graph"] == g and r["mode"] == m]) * 1e3 for m in modes}
    print(f"{g:30}" + "".join(f"{v[m]:13.4f}" for m in modes) + f"   {v['new-plain']/v['split-plain']:9.3f} {v['head-plain']/v['split-plain']:10.3f}")
print("counts agree:", all(len({r["count"] for r in rows if r["graph"] == g}) == 1 for g in graphs))
PY
tail -3 $R/err.log
