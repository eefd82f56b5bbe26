#!/usr/bin/env bash
# ParMBE's interrupt tests, ROUNDS times in a row, with HOGS busy loops beside them
# (docs/reliability.md, "Ctrl-C under load").  From the repo root, in the venv:
#   bash benchmarks/stress_interrupt.sh            # ROUNDS=15 HOGS=3
set -u
ROUNDS=${ROUNDS:-15}
HOGS=${HOGS:-3}
pids=()
for _ in $(seq 1 "$HOGS"); do
  timeout 1800 sh -c 'while :; do :; done' &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2> /dev/null' EXIT
pass=0
fail=0
for i in $(seq 1 "$ROUNDS"); do
  log=$(mktemp)
  if timeout 300 python -m pytest -q -p no:cacheprovider tests/test_parmbe.py \
      -k "interrupt or terminate" > "$log" 2>&1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
  fi
  echo "round $i: $(tail -1 "$log") load $(cut -d' ' -f1 /proc/loadavg)"
  rm -f "$log"
done
echo "passed rounds $pass, failed rounds $fail"
[ "$fail" = 0 ]
