"""mbebench.environment: what every row records about the machine, read without a GPU here
(a stand-in nvidia-smi, a stand-in /proc/cpuinfo)."""

from __future__ import annotations

import json
import subprocess
import sys

from mbebench import environment


def test_gpus_from_nvidia_smi(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB'\n")
    smi.chmod(0o755)
    assert environment.gpus(str(smi)) == [
        {"name": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "memory": "81559 MiB"}]
    broken = tmp_path / "broken"
    broken.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2; exit 9\n")
    broken.chmod(0o755)
    assert environment.gpus(str(broken)) == []
    assert environment.gpus(str(tmp_path / "missing")) == []


def test_cpu_model_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\n"
                    "model name\t: Intel(R)  Xeon(R) Platinum 8480+\n")
    assert environment.cpu_model(str(info)) == "Intel(R) Xeon(R) Platinum 8480+"


CHEAP = (
    "import json, sys\n"
    "from mbebench import environment\n"
    "environment.environment()\n"
    "engines = ('numba', 'numba_cuda', 'cumbe', 'baselines')\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in engines)))\n"
)


def test_the_row_environment_is_cheap_and_complete():
    # cheap: no engine import, no numba (no CUDA context), whatever the machine's load
    p = subprocess.run([sys.executable, "-c", CHEAP], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.splitlines()[-1]) == []
    environment.environment.cache_clear()
    env = environment.environment()
    for key in ("cpu_model", "cpu_count", "cpus_allowed", "gpu", "gpu_count", "gpu_driver",
                "cuda_driver", "python", "numba", "numba_cuda", "numpy"):
        assert key in env, key
    line = environment.describe({**env, "gpu": "NVIDIA H100", "gpu_driver": "580",
                                 "cuda_driver": "13.0"})
    assert "NVIDIA H100 (driver 580, CUDA 13.0)" in line and f"numba {env['numba']}" in line
    assert environment.describe(None) == "unknown environment"
