# Sourced by the one-call device scripts (run from the repo root: this folder's and
# ../memory-caps/): installs the carried numpy 2.4 cp312 wheel (.whl/; numba-cuda 0.30.4 fails to import with the image's
# numpy 2.5), sets the environment of every step, and $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=/tmp/nbc
OUT=${OUT:-/tmp/out}
# el MESSAGE: the message after the seconds since this file was sourced (the steps' log lines)
T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
