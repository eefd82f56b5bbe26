# Kernel seconds of several source trees in rotation, one device call (nvidia-h100-x1, carry
# [".whl", ".csr", ".devrun", ".base"], repo root):
#   [GRIDB="B C"] bash command.sh TREE...
# .base: git archive eddebb2 cumbe mbebench benchmarks/gpu (the tree "base"); .devrun/trees/T:
# git archive 93947d9 cumbe mbebench benchmarks/gpu benchmarks/standins.py
# benchmarks/standin_presets.py, then patch -p1 < tree-T.patch (this folder); .devrun/gridb.py
# is ../2026-11-26-grid-between/gridb.py.  GRIDB: trees whose IMDB-actor-blocks plans at 1 GiB
# gridb.py times afterwards.  The four calls: GRIDB="B C" bash command.sh A B C (table.txt);
# bash command.sh H A2 A4 (call3/); bash command.sh L LA4 LC (call4/); bash command.sh R RA4
# (refused: no device time left).  Tree D, the first call, ran benchmarks/gpu/ab_trees.sh
# (table-D.txt).
set -u
. benchmarks/gpu/device_env.sh
TREES="$*"
R=$OUT/trees; mkdir -p $R
nvidia-smi -L > $R/gpu.txt
GB=$PWD/.devrun/gridb.py
TT=$PWD/benchmarks/gpu/results/2026-11-26-progress-blocks/time_tree.py
dir() { if [ "$1" = base ]; then echo .base; else echo .devrun/trees/$1; fi; }
for t in base $TREES; do
  (cd $(dir $t) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-$t.jsonl 2>&1) &
done
wait; el warm; cat $R/warm-*.jsonl | cut -c1-150
M=$(for m in brunson_corporate-leadership unicodelang opsahl-ucforum dbpedia-occupation movielens-10m_ti movielens-10m_ut marvel movielens-10m_ui youtube-groupmemberships edit-nawiki; do realpath .csr/$m.csr; done)
for rnd in 1 2; do
  for t in base $TREES; do
    (cd $(dir $t) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t CUMBE_PROGRESS_S=1000 timeout 120 python3 $TT $t 7 $M >> $R/runs.jsonl 2>> $R/err.log)
    el "round $rnd $t"
  done
done
python3 - $R/runs.jsonl $TREES <<'PY' | tee $R/table.txt
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
trees = sys.argv[2:]
by = collections.defaultdict(list)
for r in rows: by[(r["graph"], r["tree"])].append(r["median_s"])
gs = list(dict.fromkeys(r["graph"] for r in rows))
print("%-28s %9s" % ("graph", "base s") + "".join(" %8s" % f"{t}/base" for t in trees))
for g in gs:
    b = sum(by[(g, "base")]) / len(by[(g, "base")])
    print("%-28s %9.5f" % (g, b) + "".join(" %8.4f" % (sum(by[(g, t)]) / len(by[(g, t)]) / b) for t in trees))
bad = [(r["graph"], r["tree"]) for r in rows if r["reference_ok"] is False]
print("reference mismatches:", bad)
PY
for t in ${GRIDB:-}; do
  (cd .devrun/trees/$t && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t CUMBE_GRIDB_CAPS=1.0 timeout 150 python3 $GB $R/gridb-$t.jsonl IMDB-actor-blocks:1 2>&1 | grep '^{' | cut -c1-900)
  el "gridb $t"
done
