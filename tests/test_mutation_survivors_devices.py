"""The multi-GPU pool's time and dispatch order, without a GPU or the simulator (issue 33,
breaks 5 and 6): the pool's workers are stand-ins (tests/survivor_fakes.py) that speak the
device worker's pipe protocol, take a set time to prepare and to run a shard, and log each
shard they are handed, in the order they get them.

What these tests rely on beyond the pool's public ``DevicePool(...).run(...)`` and its
result: the name ``cumbe.devices.worker`` (the function each worker process runs, replaced
here) and the messages of :mod:`cumbe.device_worker`."""

from __future__ import annotations

import json

import pytest

from mbebench.csr import from_edges


def _pool(monkeypatch, tmp_path, n_devices: int, **fake):
    import survivor_fakes

    from cumbe import devices

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # the pool's fake devices, no CUDA
    monkeypatch.setenv(devices.SIM_DEVICES_ENV, str(n_devices))
    monkeypatch.setenv("FAKE_DISPATCH_LOG", str(tmp_path / "dispatch"))
    monkeypatch.setenv("FAKE_JOB", json.dumps(fake))  # the workers' environment
    monkeypatch.setattr(devices, "worker", survivor_fakes.device_worker)
    return devices.DevicePool("all")


GRAPH = from_edges([0, 1], [0, 1], 2, 2)


def _dispatched(tmp_path) -> list[tuple[int, int]]:
    return [tuple(map(int, ln.split())) for ln in (tmp_path / "dispatch").read_text().split("\n")
            if ln]


def test_the_multi_gpu_time_leaves_out_start_preparation_and_compiling(monkeypatch, tmp_path):
    prepare_s, shard_s = 1.5, 0.05
    with _pool(monkeypatch, tmp_path, 2, fake_loads=[4, 3, 2, 1], fake_prepare_s=prepare_s,
               fake_shard_s=shard_s) as pool:
        r = pool.run(GRAPH, None, shards=4)
    st = r.stats
    assert r.count == 4 and len(_dispatched(tmp_path)) == 4
    assert r.algo_seconds == st["wall_s"]
    # the devices' preparation is before the clock starts, the shards' work inside it
    assert st["startup_s"] >= prepare_s and st["total_wall_s"] >= prepare_s + st["wall_s"]
    assert 2 * shard_s <= st["wall_s"] < prepare_s, st
    busy = max(d["busy_s"] for d in st["devices"])
    assert busy <= st["wall_s"]


@pytest.mark.parametrize("n_devices", [1, 2])
def test_shards_are_handed_out_largest_estimated_cost_first(monkeypatch, tmp_path, n_devices):
    loads = [1.0, 5.0, 3.0, 2.0, 4.0, 0.5]
    with _pool(monkeypatch, tmp_path, n_devices, fake_loads=loads, fake_shard_s=0.02) as pool:
        r = pool.run(GRAPH, None, shards=len(loads))
    log = _dispatched(tmp_path)
    assert r.count == len(loads) and sorted(s for _, s in log) == list(range(len(loads)))
    # each device takes the next shard when it reports its last one: the order the workers
    # were handed them (the log), not a sorted list, is the queue's order
    per = {d: [s for dd, s in log if dd == d] for d in range(n_devices)}
    assert {seq[0] for seq in per.values()} == {1: {1}, 2: {1, 4}}[n_devices]  # the largest
    for seq in per.values():
        assert [loads[s] for s in seq] == sorted((loads[s] for s in seq), reverse=True), log
    if n_devices == 1:
        assert per[0] == sorted(range(len(loads)), key=lambda s: -loads[s])
