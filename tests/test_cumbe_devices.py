"""cuMBE on several devices (``devices``, cumbe/devices.py), issue 18 item 2.

The device pool's logic (one worker process per device, one preparation per worker,
shards from a queue, sums, per-device stats, failures) runs here with N fake devices:
numba's CUDA simulator with ``MBEBENCH_SIM_DEVICES=N``, whose workers run the simulator
and only record their device id.  Counts and fingerprints must equal the single run's
and the brute-force oracle's (every shard count and device subset on a skewed graph, the
dynamic queue on three); a failing or dying worker is one line naming the graph, the device
and the shard, and no count.  The simulator is switched on before numba.cuda is imported, so
the runs are in child processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mbebench.csr import from_edges, write_csr
from mbebench.spec import ConfigError

REPO = Path(__file__).resolve().parents[1]


def _child(args, env_extra=None, timeout=600):
    env = dict(os.environ)
    for k in ("NUMBA_ENABLE_CUDASIM", "MBEBENCH_SIM_DEVICES", "MBEBENCH_TEST_DEVICE_FAULT"):
        env.pop(k, None)
    env.update({"NUMBA_ENABLE_CUDASIM": "1", **(env_extra or {})})
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "benchmarks"),
                                         env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


# --- the parameter and the plan (no simulator) --------------------------------------


def test_devices_values():
    from cumbe.spec import gpus_of, parse_devices

    assert parse_devices(None) is None
    assert parse_devices("all") == "all"
    assert parse_devices(2) == parse_devices("2") == parse_devices(2.0) == 2
    assert parse_devices("0,1") == parse_devices([0, 1]) == (0, 1)
    assert parse_devices("1,") == (1,)
    for bad in (0, "0", -1, True, "x", "all,1", [0, 0], "0,0", [], 1.5, [True]):
        with pytest.raises(ValueError, match="devices must be") as e:
            parse_devices(bad)
        assert repr(bad) in str(e.value) and "\n" not in str(e.value)
    assert gpus_of({}) == gpus_of({"devices": None}) == 1
    assert gpus_of({"devices": 3}) == 3 and gpus_of({"devices": "2,5"}) == 2


def test_device_ids_resolve_against_the_visible_devices():
    from cumbe.devices import resolve, shard_count
    from mbebench.engine import EngineSkipped

    assert resolve("all", 3) == [0, 1, 2]
    assert resolve(2, 3) == [0, 1] and resolve("2,0", 3) == [2, 0]
    with pytest.raises(ValueError, match="only 2 CUDA device"):
        resolve(3, 2)
    with pytest.raises(ValueError, match="no device 4"):
        resolve([1, 4], 2)
    with pytest.raises(EngineSkipped):
        resolve("all", 0)
    assert shard_count(1) == 1 and shard_count(2) == 16 and shard_count(3, 2) == 6


def _cumbe_runs(section, monkeypatch=None, gpus=None):
    from mbebench.plan import plan_runs

    config = {"datasets": {"d": {"konect": "x"}}, "konect": {"base_url": "http://x/"},
              "engines": {"repeats": 1, "timeout_s": 60, "imbea": {"enabled": False},
                          "parmbe": {"enabled": False},
                          "cumbe": {"instrument": False, "variant": "cuMBE", **section}}}
    return [r for r in plan_runs(config, cores=4).values() if r.engine == "cumbe"]


def test_a_multi_gpu_run_asks_snakemake_for_its_gpus(monkeypatch):
    # the rule's `gpu` resource is RunSpec.gpu (workflow/rules/engines.smk)
    assert [r.gpu for r in _cumbe_runs({})] == [1]
    assert [r.gpu for r in _cumbe_runs({"devices": 2})] == [2]
    assert [r.gpu for r in _cumbe_runs({"devices": "0,1,3"})] == [3]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    runs = _cumbe_runs({"devices": [1, "all"]})  # a list is a sweep: 1 GPU, then all
    assert sorted(r.gpu for r in runs) == [1, 4]
    assert len({r.run_id for r in runs}) == 2
    with pytest.raises(ConfigError, match=r"engines\.cumbe.*devices"):
        _cumbe_runs({"devices": "0"})
    with pytest.raises(ConfigError, match=r"engines\.cumbe\.devices"):
        _cumbe_runs({"devices": 0})


# --- the pool in the simulator ----------------------------------------------------

POOL_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    import standins
    from mbebench.csr import from_edges
    from mbebench.oracle import count_and_fingerprint
    from cumbe.engine import run
    from cumbe.devices import DevicePool

    MASK = (1 << 64) - 1
    P = dict(threads=32, blocks=1, k=2)

    def graphs():
        rng = np.random.default_rng(11)
        m = rng.random((8, 9)) < 0.6
        l, r = np.nonzero(m)
        yield "random", from_edges(l, r, 8, 9)
        m = rng.random((9, 8)) < 0.5
        m[0, :] = True  # a hub: one task much larger than the rest
        l, r = np.nonzero(m)
        yield "hub", from_edges(l, r, 9, 8)
        yield "crown6", standins.crown(6)

    if __name__ == "__main__":
        out = []
        with DevicePool("all") as pool:
            for name, g in graphs():
                want = list(count_and_fingerprint(g))
                one = run(g, **P)
                rec = {"graph": name, "want": want, "single": [one.count, one.fingerprint],
                       "runs": []}
                # every form of the device and shard choice on the hub (the skewed graph),
                # the dynamic queue on each graph (the simulator is most of CI's time)
                forms = ((None, 7), ([0, 2], 3), ([1], None), ("all", 1))
                for devices, shards in forms if name == "hub" else forms[:1]:
                    r = pool.run(g, P, devices=devices, shards=shards)
                    st = r.stats
                    lay = st["shard_layout"]
                    rec["runs"].append({
                        "devices": devices, "shards": st["shards"],
                        "got": [r.count, r.fingerprint], "time": r.algo_seconds,
                        "wall": st["wall_s"], "ids": [d["id"] for d in st["devices"]],
                        "per_device": [[d["shards"], d["count"], d["busy_s"] > 0]
                                       for d in st["devices"]],
                        "layout": sorted(x["shard"] for x in lay),
                        "layout_counts": sum(x["count"] for x in lay),
                        "layout_devices": sorted({x["device"] for x in lay}),
                        "order_est": [x["est_cost"] for x in lay],
                        "tasks": sum(x["tasks"] for x in lay), "n_tasks": st["n_tasks"],
                        "device": st["device"], "note": "wall time" in st["time_note"]})
                # through the engine, and the pipeline's shard split further on devices
                r = run(g, **P, devices=3, shards_per_device=2)
                rec["engine"] = [r.count, r.fingerprint, r.stats["shards"],
                                 r.stats["device_count"]]
                if name != "hub":
                    out.append(rec)
                    continue
                c = f = 0
                for i in range(2):
                    r = pool.run(g, P, shards=3, shard=f"{i}/2")
                    c += r.count
                    f = (f + r.fingerprint) & MASK
                    assert r.stats["shard"] == f"{i}/2", r.stats
                rec["outer"] = [c, f]
                out.append(rec)
        print(json.dumps(out))
""")


@pytest.mark.cudasim
def test_pool_counts_equal_single_run_and_oracle(tmp_path):
    (tmp_path / "pool_child.py").write_text(POOL_CHILD)
    p = _child([str(tmp_path / "pool_child.py")], {"MBEBENCH_SIM_DEVICES": "3"}, timeout=2400)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert [o["graph"] for o in out] == ["random", "hub", "crown6"]
    assert out[2]["want"][0] == 2**6 - 2
    for o in out:
        assert o["single"] == o["want"], o["graph"]
        assert o["engine"] == [*o["want"], 6, 3], o["graph"]
        for r in o["runs"]:
            assert r["got"] == o["want"], (o["graph"], r)
            n = r["shards"]
            assert r["layout"] == sorted(f"{i}/{n}" for i in range(n))
            assert r["layout_counts"] == r["got"][0] and r["tasks"] == r["n_tasks"]
            assert sum(d[1] for d in r["per_device"]) == r["got"][0]
            assert sum(d[0] for d in r["per_device"]) == n
            assert r["order_est"] == sorted(r["order_est"], reverse=True)  # largest first
            assert r["time"] == r["wall"] and r["note"]
        assert o["runs"][0]["device"] == "3 x simulator"
        # a dynamic queue: with 7 shards every one of the 3 devices took some
        assert o["runs"][0]["layout_devices"] == [0, 1, 2]
    hub = out[1]
    assert [r["ids"] for r in hub["runs"]] == [[0, 1, 2], [0, 2], [1], [0, 1, 2]]
    assert [r["shards"] for r in hub["runs"]] == [7, 3, 1, 1]
    assert hub["outer"] == hub["want"]
    assert [len(o["runs"]) for o in out] == [1, 4, 1]


FAIL_CHILD = textwrap.dedent("""
    import json, sys
    from mbebench.csr import read_csr
    from cumbe.engine import run
    if __name__ == "__main__":
        g = read_csr(sys.argv[1])
        try:
            r = run(g, threads=32, blocks=1, k=2, devices="all")
        except Exception as e:
            print(json.dumps({"type": type(e).__name__, "message": str(e)}))
        else:
            print(json.dumps({"count": r.count}))
""")


@pytest.mark.cudasim
@pytest.mark.parametrize("mode,kind,words", [
    ("raise", "LaunchError", ["cuMBE failed on device 1", "test fault"]),
    ("exit", "DeviceError", ["worker of device 1", "died (exit code 3)", "while running"]),
])
def test_a_failing_device_is_one_line_and_no_count(tmp_path, mode, kind, words):
    path = tmp_path / "g.csr"
    write_csr(from_edges([0, 0, 1, 1, 2, 2, 3], [0, 1, 1, 2, 2, 3, 3], 4, 4), path)
    (tmp_path / "fail_child.py").write_text(FAIL_CHILD)
    p = _child([str(tmp_path / "fail_child.py"), str(path)],
               {"MBEBENCH_SIM_DEVICES": "2", "MBEBENCH_TEST_DEVICE_FAULT": f"1:{mode}"})
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out.get("type") == kind, out
    msg = out["message"]
    assert "\n" not in msg and msg.startswith(f"{path}: ") and msg.endswith("no count")
    assert "shard " in msg and "/16" in msg, msg  # 2 devices x 8 (the default)
    for w in words:
        assert w in msg, msg


@pytest.mark.cudasim
def test_runner_row_of_a_failing_device_has_no_count(tmp_path):
    path = tmp_path / "g.csr"
    write_csr(from_edges([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], 3, 3), path)
    row = tmp_path / "row.json"
    p = _child(["-m", "mbebench", "run", "--dataset", "g", "--run-id", "cumbe-2gpu",
                "--engine", "cumbe", "--graph", str(path), "--out", str(row), "--simulate",
                "--params", json.dumps({"devices": 2, "threads": 32, "blocks": 1, "k": 2,
                                        "instrument": False})],
               {"MBEBENCH_SIM_DEVICES": "2", "MBEBENCH_TEST_DEVICE_FAULT": "0:raise"})
    r = json.loads(row.read_text())
    assert r["status"] == "error" and r["count"] is None and r["fingerprint"] is None, (
        r, p.stderr[-2000:])
    assert "\n" not in r["message"] and "device 0" in r["message"] and "shard" in r["message"]


@pytest.mark.cudasim
def test_cli_devices_all(tmp_path):
    path = tmp_path / "g.csr"
    sys.path.insert(0, str(REPO / "benchmarks"))
    import standins

    write_csr(standins.crown(5), path)
    out = tmp_path / "r.json"
    p = _child(["-m", "cumbe", "run", str(path), "--threads", "32", "--k", "2",
                "--devices", "all", "--shards-per-device", "2", "--json", str(out)],
               {"MBEBENCH_SIM_DEVICES": "2"})
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith("count 30 ") and "2 x simulator, 4 shards" in p.stdout
    r = json.loads(out.read_text())
    assert r["count"] == 30 and r["stats"]["shards"] == 4 and r["kernel_s"] is None
    bad = _child(["-m", "cumbe", "run", str(path), "--devices", "0"], {})
    assert bad.returncode == 1 and bad.stderr.startswith("error: devices must be")
