set -u
. benchmarks/gpu/device_env.sh
R=/tmp/pc2; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
W="cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 noRS-instr:128"
for t in split cur; do
  (cd .$t && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$t timeout 200 python3 benchmarks/gpu/warm.py --jobs 5 $W > $R/warm-$t.jsonl 2>&1) &
done
timeout 200 python3 benchmarks/gpu/warm.py --jobs 6 $W > $R/warm-new.jsonl 2>&1 &
wait; el warm done
tm() {
  if [ "$1" = new ]; then
    timeout 62 python3 benchmarks/gpu/verify_and_time.py --out $R/t-$2 --budget 58 --repeats 7 --skip oracle,grids,variants,instr,side > $R/t-$2.log 2>&1
  else
    (cd .$1 && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$1 timeout 62 python3 benchmarks/gpu/verify_and_time.py --out $R/t-$2 --csr-dir ../.csr --budget 58 --repeats 7 --skip oracle,grids,variants,instr,side) > $R/t-$2.log 2>&1
  fi
  el timed $2
}
tm split split1; tm cur cur1; tm new new1; tm split split2; tm new new2
python3 - $R <<'PY' | tee $R/table.txt
import json,sys,pathlib
R=pathlib.Path(sys.argv[1]); t={}
names=("split1","cur1","new1","split2","new2")
for n in names:
    p=R/f"t-{n}"/"results.json"
    if p.exists():
        t[n]={k:v["runs"].get("cuMBE",{}).get("median_s") for k,v in json.loads(p.read_text())["datasets"].items()}
print(f"{'dataset':22}", *names, "cur/split1 new/split1 new/split2")
for d in t.get("split1",{}):
    v=[t.get(k,{}).get(d) for k in names]
    f=lambda a,b: f"{a/b:.3f}" if a and b else "-"
    print(f"{d:22}", *[f"{x:.5f}" if x else "-" for x in v], f(v[1],v[0]), f(v[2],v[0]), f(v[4],v[3]))
PY
timeout 75 python3 -m cumbe.selfcheck --variants cuMBE,noRS --examples 40 --blocks 1,2,7,0 --time-limit 55 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -3 $R/selfcheck.log; el selfcheck
tar -czf $OUT/pc2.tar.gz -C /tmp pc2
