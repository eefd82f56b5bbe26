# The first probe (carry [".whl", ".csr", ".split"]): which part of progress costs on short
# graphs: "ds" the kernel on the default stream, "np" no polling, "noreport" no counters.
set -u
. benchmarks/gpu/device_env.sh
R=$OUT/p; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
mkdir -p /tmp/noreport && cp -r cumbe mbebench benchmarks /tmp/noreport/
python3 - <<'PY'
call = '                report(prog, cuda.blockIdx.x, sh64, g, acc, own)\n'
p = '/tmp/noreport/cumbe/kernel/stages.py'; s = open(p).read(); assert s.count(call) == 1, s.count(call)
open(p, 'w').write(s.replace(call, ''))
PY
tree() { case $1 in split) echo $PWD/.split;; cur) echo $PWD;; *) echo /tmp/$1;; esac; }
for v in split cur noreport; do
  (cd $(tree $v) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$v timeout 200 python3 benchmarks/gpu/warm.py --jobs 1 cuMBE:128 > $R/warm-$v.jsonl 2>&1) &
done
wait; el warm; cat $R/warm-*.jsonl | cut -c1-160
G="$PWD/.csr/unicodelang.csr $PWD/.csr/brunson_corporate-leadership.csr $PWD/.csr/opsahl-ucforum.csr $PWD/.csr/dbpedia-occupation.csr $PWD/.csr/marvel.csr"
P=$PWD/benchmarks/gpu/results/2026-11-26-progress-wait/probe_prog.py
for rnd in 1 2 3; do
  for tm in split:plain cur:plain cur:ds cur:np cur:dsnp noreport:plain noreport:dsnp; do
    t=${tm%%:*}; m=${tm##*:}
    (cd $(tree $t) && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t CUMBE_PROGRESS_S=1000 timeout 60 python3 $P $t-$m 21 $G >> $R/runs.jsonl 2>> $R/err.log)
  done
  el round $rnd
done
python3 - $R/runs.jsonl <<'PY' | tee $R/table.txt
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
modes = list(dict.fromkeys(r["mode"] for r in rows)); graphs = list(dict.fromkeys(r["graph"] for r in rows))
print("median over rounds of the per-process median kernel ms")
print(f"{'graph':30}" + "".join(f"{m:>15}" for m in modes))
for g in graphs:
    vals = [statistics.median([r["median_s"] for r in rows if r["graph"] == g and r["mode"] == m] or [float('nan')]) * 1e3 for m in modes]
    print(f"{g:30}" + "".join(f"{v:15.4f}" for v in vals))
print("counts agree:", all(len({r["count"] for r in rows if r["graph"] == g}) == 1 for g in graphs))
PY
tail -3 $R/err.log
