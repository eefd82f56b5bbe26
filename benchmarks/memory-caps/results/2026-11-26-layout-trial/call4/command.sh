set -u
. benchmarks/gpu/device_env.sh
R=$OUT/trees; mkdir -p $R
nvidia-smi -L > $R/gpu.txt
GB=$PWD/.devrun/gridb.py
TT=$PWD/benchmarks/gpu/results/2026-11-26-progress-blocks/time_tree.py
cp benchmarks/gpu/reference.json /tmp/ref.json
for t in base L LA4 LC; do
  d=.devrun/trees/$t; [ $t = base ] && d=.base
  (cd $d && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-$t.jsonl 2>&1) &
done
wait; el warm; cat $R/warm-*.jsonl | cut -c1-150
M=$(for m in brunson_corporate-leadership unicodelang opsahl-ucforum dbpedia-occupation movielens-10m_ti movielens-10m_ut marvel movielens-10m_ui youtube-groupmemberships edit-nawiki; do realpath .csr/$m.csr; done)
for rnd in 1 2; do
  for t in base L LA4 LC; do
    d=.devrun/trees/$t; [ $t = base ] && d=.base
    (cd $d && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t CUMBE_PROGRESS_S=1000 timeout 120 python3 $TT $t 7 $M >> $R/runs.jsonl 2>> $R/err.log)
    el "round $rnd $t"
  done
done
python3 - $R/runs.jsonl <<'PY' | tee $R/table.txt
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(list)
for r in rows: by[(r["graph"], r["tree"])].append(r["median_s"])
gs = list(dict.fromkeys(r["graph"] for r in rows))
print("%-28s %9s %7s %7s %7s" % ("graph", "base s", "L/base", "LA4/base", "LC/base"))
for g in gs:
    b = sum(by[(g, "base")]) / len(by[(g, "base")])
    print("%-28s %9.5f" % (g, b) + "".join(" %7.4f" % (sum(by[(g, t)]) / len(by[(g, t)]) / b) for t in ("L", "LA4", "LC")))
bad = [(r["graph"], r["tree"]) for r in rows if r["reference_ok"] is False]
print("reference mismatches:", bad)
PY
