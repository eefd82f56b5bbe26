"""cuMBE in numba's CUDA simulator (one-block grid) against the brute-force oracle.

The simulator must be switched on before numba.cuda is first imported, so the
checks run in child processes (``python -m cumbe.selfcheck --simulator``) and
this pytest process stays untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(args, env_extra=None, timeout=300):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.cudasim
@pytest.mark.parametrize(
    "examples,max_side,bsf",
    [
        (24, 7, "4"),  # every variant, instrumented or not, k 1..3, forced stealing, all sides
        (10, 8, "0"),  # force the binary-search counting paths
    ],
)
def test_simulator_matches_oracle(examples, max_side, bsf):
    p = _run(["-m", "cumbe.selfcheck", "--simulator", "--examples", str(examples),
              "--max-side", str(max_side)], {"CUMBE_BSF": bsf})
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["examples"] == examples and out["runs"] == 4 * examples


@pytest.mark.cudasim
def test_simulator_deep_publishing_matches_oracle():
    # dense graphs, stop raised after every fetch, work published only from level >= 2:
    # thieves take candidates of deep levels with those levels' L and R prefixes
    p = _run(["-m", "cumbe.selfcheck", "--simulator", "--examples", "0", "--dense", "4",
              "--max-side", "8"])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["examples"] == 4 and out["runs"] == 16


def test_no_gpu_no_simulator_skips():
    code = (
        "from numba import cuda\n"
        "from mbebench.csr import from_edges\n"
        "from mbebench.engine import EngineSkipped, get_engine\n"
        "if cuda.is_available():\n"
        "    print('HAS_GPU'); raise SystemExit(0)\n"
        "try:\n"
        "    get_engine('cumbe')(from_edges([0], [0], 1, 1))\n"
        "except EngineSkipped as e:\n"
        "    print('SKIPPED', e)\n"
    )
    p = _run(["-c", code])
    assert p.returncode == 0, p.stderr[-2000:]
    if "HAS_GPU" in p.stdout:
        pytest.skip("a CUDA device is present")
    assert "SKIPPED no CUDA device" in p.stdout


def test_cli_in_simulator(tmp_path):
    from mbebench.csr import from_edges, write_csr

    g = from_edges([0, 0, 1, 2], [0, 1, 1, 2], 3, 3)
    path = tmp_path / "g.csr"
    write_csr(g, path)
    out = tmp_path / "r.json"
    p = _run(["-m", "cumbe", "run", str(path), "--threads", "32", "--variant", "noES",
              "--json", str(out)], {"NUMBA_ENABLE_CUDASIM": "1"})
    assert p.returncode == 0, p.stderr[-2000:]
    from mbebench.oracle import count_and_fingerprint

    r = json.loads(out.read_text())
    c, fp = count_and_fingerprint(g)
    assert r["count"] == c and int(r["fingerprint"], 16) == fp
    assert r["stats"]["device"] == "simulator" and r["stats"]["blocks"] == 1


def test_instrumented_phases_cover_every_block_for_the_whole_kernel():
    """Per-phase times add up to blocks x kernel time: idle blocks count as 'other'."""
    import json as _json
    import os as _os
    import subprocess as _sp
    import sys as _sys

    code = (
        "import json\n"
        "from mbebench import csr\n"
        "from cumbe.engine import run\n"
        "g = csr.from_edges([0,0,1,1,2,3,3,4],[0,1,1,2,2,0,3,3])\n"
        "out = {}\n"
        "for v in ('cuMBE', 'noWS'):\n"
        "    r = run(g, variant=v, threads=32, instrument=True)\n"
        "    out[v] = [sum(r.stats['phases_s'].values()), r.stats['blocks'], r.algo_seconds]\n"
        "print(json.dumps(out))\n"
    )
    res = _sp.run([_sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                  env={**_os.environ, "NUMBA_ENABLE_CUDASIM": "1"})
    assert res.returncode == 0, res.stderr[-2000:]
    for variant, (total, blocks, kernel_s) in _json.loads(res.stdout.splitlines()[-1]).items():
        assert total >= blocks * kernel_s * (1 - 1e-9), variant
