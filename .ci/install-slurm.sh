#!/usr/bin/env bash
# Installs the SLURM daemons and client tools that tests/test_slurm.py needs for its
# throwaway one-node cluster on 127.0.0.1 (the test starts and stops the daemons itself).
# Debian/Ubuntu, as root (or with sudo). Idempotent and quiet; a no-op when SLURM is there.
# Without it the SLURM tests skip with a reason; nothing else depends on it.
set -euo pipefail

if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null; then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install-slurm.sh: no apt-get here; the SLURM tests will be skipped" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "install-slurm.sh: not root and no sudo; the SLURM tests will be skipped" >&2
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# munge: for a SLURM without the auth/none plugin (Slurm >= 23.11); the test picks auth/none
# where it exists. No systemd needed: nothing is started here.
$SUDO apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
