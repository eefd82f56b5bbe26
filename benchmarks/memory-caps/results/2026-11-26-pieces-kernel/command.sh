# One device call (nvidia-h100-x1), from the repo root, carry [".whl", ".csr"]: the kernel with
# tasks in pieces (after f800951) re-verified: GPU self-check, pieces on 3 graphs, the short
# memory-cap sweep and memcheck of results/2026-11-26-current-kernel/ (same arguments).
# The device returns at most 8 files: sweep/runs.jsonl and summary.md stayed there (the
# summary table is in sweep.log).
set -u
. benchmarks/gpu/device_env.sh
R=$OUT/v; mkdir -p $R
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi -L > $R/gpu.txt
timeout 200 python3 benchmarks/gpu/warm.py --jobs 15 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128 noWS-instr:128 noRS-instr:128 noES-instr:128 cuMBE-pieces:128 noES-pieces:128 noWS-pieces:128 cuMBE-instr-pieces:128 noES-instr-pieces:128 noWS-instr-pieces:128 > $R/warm.jsonl 2>&1 &
python3 benchmarks/standins.py --crown 24 --out /tmp/g > /dev/null
wait; el warm; cut -c1-150 $R/warm.jsonl
timeout 100 python3 -m cumbe.selfcheck --variants cuMBE,noES,noWS,noRS --examples 60 --dense 20 --blocks 1,2,7,0 --time-limit 80 --run-limit 20 > $R/selfcheck.log 2>&1; echo "selfcheck rc $?"; tail -1 $R/selfcheck.log | cut -c1-400; el selfcheck
CUMBE_PROGRESS_S=1000 timeout 60 python3 benchmarks/shards/pieces_gpu.py --shards 7 --pieces 4 /tmp/g/crown-24.csr .csr/marvel.csr .csr/edit-nawiki.csr > $R/pieces.jsonl 2> $R/pieces.err; echo "pieces rc $?"; cut -c1-200 $R/pieces.jsonl; el pieces
timeout 230 python3 benchmarks/memory-caps/sweep.py --out $R/sweep --mirror .csr/unicodelang.csr .csr/opsahl-ucforum.csr .csr/marvel.csr .csr/youtube-groupmemberships.csr --standins BookCrossing-blocks,YouTube-blocks --seeds 1,2,3 --scale 0.05 --caps smallest,0.25,0.5,1,8,none --repeats 2 --budget 210 --run-limit 20 > $R/sweep.log 2>&1; echo "sweep rc $?"; tail -25 $R/sweep.log; el sweep
LEFT=$(( 570 - $(date +%s) + T0 ))
timeout $LEFT python3 benchmarks/memory-caps/memcheck.py --out $R/memcheck --graphs .csr/unicodelang.csr,.csr/brunson_corporate-leadership.csr,.csr/opsahl-ucforum.csr --standins BookCrossing-blocks --scale 0.02 --caps smallest,0.1,0.25 --limit 60 --budget $(( LEFT - 15 )) > $R/memcheck.log 2>&1; echo "memcheck rc $?"; tail -12 $R/memcheck.log; el memcheck
