#!/usr/bin/env bash
# One device call: the split kernel (.split = git archive 71c469a cumbe mbebench benchmarks/gpu)
# against this tree (progress counters), two interleaved rounds, then the GPU self-check.
# Carry .whl .csr .split; results under $OUT (see README.md, "The kernel split ...").
set -u
. benchmarks/gpu/device_env.sh
R=/tmp/x1b; mkdir -p $R
git log -1 --format=%H > $R/commit.txt 2>/dev/null
W="cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 noRS-instr:128"
(cd .split && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-split timeout 200 python3 benchmarks/gpu/warm.py --jobs 6 $W > $R/warm-split.jsonl 2>&1) &
timeout 200 python3 benchmarks/gpu/warm.py --jobs 6 $W > $R/warm-new.jsonl 2>&1 &

wait; el warm done
tm() {
  if [ "$1" = new ]; then
    timeout 70 python3 benchmarks/gpu/verify_and_time.py --out $R/t-$2 --budget 65 --repeats 7 --skip oracle,grids,variants,instr,side > $R/t-$2.log 2>&1
  else
    (cd .$1 && PYTHONPATH=/tmp/site:$PWD NUMBA_CACHE_DIR=/tmp/nbc-$1 timeout 70 python3 benchmarks/gpu/verify_and_time.py --out $R/t-$2 --csr-dir ../.csr --budget 65 --repeats 7 --skip oracle,grids,variants,instr,side) > $R/t-$2.log 2>&1
  fi
  el timed $2
}
tm split split1; tm new new1; tm split split2; tm new new2
python3 - $R <<'PY'
import json,sys,pathlib,statistics
R=pathlib.Path(sys.argv[1]); t={}
for n in ("split1","new1","split2","new2"):
    p=R/f"t-{n}"/"results.json"
    if p.exists():
        t[n]={k:v["runs"].get("cuMBE",{}).get("median_s") for k,v in json.loads(p.read_text())["datasets"].items()}
print(f"{'dataset':22} split1 new1 split2 new2  new/split(r1) new/split(r2)")
for d in t.get("split1",{}):
    v=[t.get(k,{}).get(d) for k in ("split1","new1","split2","new2")]
    f=lambda a,b: f"{a/b:.3f}" if a and b else "-"
    print(f"{d:22}", *[f"{x:.5f}" if x else "-" for x in v], f(v[1],v[0]), f(v[3],v[2]))
PY
timeout 80 python3 -m cumbe.selfcheck --variants cuMBE,noRS --examples 40 --blocks 1,2,7,0 --time-limit 60 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -3 $R/selfcheck.log; el selfcheck
tar -czf $OUT/x1b.tar.gz -C /tmp x1b
