set -u
. benchmarks/gpu/device_env.sh
R=/tmp/plong; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
(cd .split && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-split timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-split.jsonl 2>&1) &
timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-new.jsonl 2>&1 &
python3 benchmarks/standins.py --preset IMDB-actor-hard --seed 1 --scale 0.5 --out /tmp/g
wait; el warm done
cat > /tmp/t.py <<'PY'
import json, sys
from mbebench.csr import read_csr
from cumbe.engine import run
g = read_csr(sys.argv[1])
out = []
for i in range(int(sys.argv[3])):
    r = run(g)
    out.append({"tree": sys.argv[2], "count": r.count, "fp": r.fingerprint, "kernel_s": r.stats["kernel_s"]})
    print(json.dumps(out[-1]), flush=True)
PY
G=/tmp/g/IMDB-actor-hard-s1-x0.5.csr
for t in split new split new; do
  if [ $t = new ]; then CUMBE_PROGRESS_S=1000 python3 /tmp/t.py $G new 2 >> $R/runs.jsonl 2>$R/err-$t.log
  else (cd .split && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-split python3 /tmp/t.py $G split 2 >> $R/runs.jsonl 2>$R/err-$t.log); fi
  el $t
done
cat $R/runs.jsonl
cp $R/runs.jsonl $OUT/
