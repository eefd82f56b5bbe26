# One device call (nvidia-h100-x1), repo root, carry [".whl", ".whl-js"]: .whl-js holds the
# jsonschema wheels the image lacks (jsonschema, jsonschema_specifications, referencing,
# rpds_py cp312; mbebench.spec checks engine defaults with it).
set -u
. benchmarks/gpu/device_env.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl-js/*.whl || exit 1
nvidia-smi -L > $OUT/gpu.txt
timeout 200 python3 benchmarks/shards/bench_overhead.py --engines cumbe --rounds 3 > $OUT/overhead.md 2> $OUT/overhead.err; echo "rc $?"; cat $OUT/overhead.md; tail -5 $OUT/overhead.err
