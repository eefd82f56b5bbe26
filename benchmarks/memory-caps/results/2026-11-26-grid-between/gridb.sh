# One device call (nvidia-h100-x1, carry [".whl", ".csr", ".devrun"], repo root, tree 93947d9);
# .devrun/gridb.py is gridb.py of this folder.
. benchmarks/gpu/device_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
git rev-parse --short HEAD
el start
timeout 570 python3 .devrun/gridb.py $OUT/gridb.jsonl "$@" 2>&1 | grep -v Warning
el done
