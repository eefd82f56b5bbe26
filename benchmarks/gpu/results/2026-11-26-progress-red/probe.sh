set -u
. benchmarks/gpu/device_env.sh
R=/tmp/probe; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
for v in noflush noreport; do mkdir -p /tmp/$v && cp -r cumbe mbebench benchmarks /tmp/$v/; done
python3 - <<'PY'
import re
blk = '''        if (acc[2] & 15) == 0:
            t = clock()
            if t >= sh64[g, X_NEXT]:
                flush(res, prog, sh64, g, acc, True)
                sh64[g, X_NEXT] = t + prm[P_REPORT]
'''
p = '/tmp/noflush/cumbe/kernel/stages.py'; s = open(p).read(); assert s.count(blk) == 1
open(p, 'w').write(s.replace(blk, ''))
call = '                report(prm, res, prog, sh64, g, acc, own)\n'
p = '/tmp/noreport/cumbe/kernel/stages.py'; s = open(p).read(); assert s.count(call) == 1
open(p, 'w').write(s.replace(call, ''))
PY
tree() { case $1 in split) echo $PWD/.split;; cur) echo $PWD;; *) echo /tmp/$1;; esac; }
for v in split cur noflush noreport; do
  (cd $(tree $v) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$v timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-$v.jsonl 2>&1) &
done
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.25 --out /tmp/g
wait; el warm done; head -c 300 $R/warm-*.jsonl
cat > /tmp/t.py <<'PY'
import json, sys
from mbebench.csr import read_csr
from cumbe.engine import run
g = read_csr(sys.argv[1])
r = run(g)
print(json.dumps({"tree": sys.argv[2], "count": r.count, "fp": r.fingerprint, "kernel_s": r.stats["kernel_s"], "tasks_run": r.stats.get("tasks_run"), "nodes": r.stats.get("nodes")}), flush=True)
PY
G=/tmp/g/IMDB-actor-hard-s1-x0.25.csr
for rnd in 1 2; do for v in split cur noflush noreport; do
  (cd $(tree $v) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$v CUMBE_PROGRESS_S=1000 timeout 60 python3 /tmp/t.py $G $v >> $R/runs.jsonl 2>>$R/err.log)
  el $v
done; done
cat $R/runs.jsonl; tail -3 $R/err.log
cp $R/runs.jsonl $OUT/; cat $R/warm-*.jsonl > $OUT/warm.jsonl
