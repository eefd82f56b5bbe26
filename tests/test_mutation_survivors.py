"""Breaks that survived the suite (issue 33, "The breaks the tests miss"), each caught here in
seconds and kept in tools/mutations.toml: the config's fail_on (the check, the closing
summary, the handler's exit status, a rerun), require_gpu in sharded runs, the parameters of
a multi-GPU run, the GPU clock's unit, the runner's peak RSS, the config schema's bounds,
the CSR reader's right offsets and the block-wide arena's rounding."""

from __future__ import annotations

import copy
import inspect
import json
import os
import struct
import subprocess
import sys
import time
import zlib
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from rowfactory import make_row, write_rows

from mbebench import cli, closing, configcheck, csr, plan, runner

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}

# ------------------------------------------------------------------------------ fail_on

# what the config schema documents as the default (workflow/schemas/config.schema.yaml)
DEFAULT_FAIL_ON = {"error", "timeout", "mismatch", "unavailable"}
OK = make_row("a", "imbea", label="iMBEA", count=10)
OUTCOME_ROWS = {
    "error": [OK, make_row("a", "toy", "error", label="toy", message="boom")],
    "timeout": [OK, make_row("a", "toy", "timeout", label="toy", message="timed out after 1 s")],
    "mismatch": [OK, make_row("a", "toy", label="toy", count=11)],
    "unavailable": [make_row("a", "imbea", "unavailable", label="iMBEA", message="gone")],
    "skipped": [OK, make_row("a", "cumbe", "skipped", label="cuMBE", message="no CUDA device")],
}


@pytest.mark.parametrize("fail_on", [None, "only-it", "all-but-it", "nothing"])
@pytest.mark.parametrize("outcome", sorted(OUTCOME_ROWS))
def test_an_outcome_fails_the_run_exactly_when_fail_on_lists_it(tmp_path, capsys, outcome,
                                                                fail_on):
    """The check rule, the closing summary and the handler's exit status agree, and a
    failing check never leaves its output (a rerun would then plan nothing and end 0)."""
    outcomes = set(OUTCOME_ROWS)
    chosen = {None: None, "only-it": [outcome], "all-but-it": sorted(outcomes - {outcome}),
              "nothing": []}[fail_on]
    fails = outcome in (DEFAULT_FAIL_ON if chosen is None else set(chosen))
    rows = OUTCOME_ROWS[outcome]
    paths = write_rows(tmp_path, rows)
    kw = {} if chosen is None else {"fail_on": chosen}

    if fails:
        with pytest.raises(closing.RunsFailed):
            closing.verdict(rows, {}, **kw)
    else:
        closing.verdict(rows, {}, **kw)
    assert closing.summarize(paths, **kw).exit_code == int(fails)

    out = tmp_path / "results" / "tables" / "agreement.txt"
    args = ["check", "--rows", *paths, "--out", str(out)]
    args += [] if chosen is None else ["--fail-on", *chosen]
    for _ in range(2):  # the same check again (a rerun) is as red as the first
        assert cli.main(args) == int(fails)
        assert out.exists() == (not fails)

    config = {} if chosen is None else {"fail_on": chosen}
    with pytest.raises(SystemExit) as e:
        closing.handler(paths, [], config, started_at=time.time(), failed=False)
    assert e.value.code == int(fails)
    capsys.readouterr()


# ------------------------------------------------------------- require_gpu in shards


def test_a_sharded_run_that_requires_a_gpu_fails_when_its_shards_are_skipped(tmp_path):
    g = csr.from_edges([0, 1, 1], [0, 0, 1], 2, 2)
    csr.write_csr(g, tmp_path / "g.csr")
    folder = tmp_path / "runs" / "D" / "x"
    folder.mkdir(parents=True)
    receipt = folder / "job-0-of-1.json"
    # the job (the plan, as the pipeline passes it) requires a GPU; the command line does not
    job = plan.direct_run("fake_engines:skip", {"shard": "0/1"}, "x", require_gpu=True).job()
    res = subprocess.run(
        [sys.executable, "-m", "mbebench", "run", "--dataset", "D", "--run-id", "x",
         "--graph", str(tmp_path / "g.csr"), "--out", str(receipt), "--job", json.dumps(job),
         "--shards", "0", "1", "--of", "2", "--retry", "0"],
        capture_output=True, text=True, env=ENV, timeout=120)
    assert res.returncode != 0, res.stderr[-2000:]
    assert "require_gpu" in res.stderr and "D x" in res.stderr
    assert list(folder.iterdir()) == []  # no skipped shard row, no receipt


# ------------------------------------------------------------------ cuMBE host side


def test_a_multi_gpu_run_gets_every_parameter_of_a_single_run(monkeypatch):
    from cumbe import devices, engine

    seen = {}

    def fake_pool_run(graph, devs, **kw):
        seen.update(kw, devices=devs)
        return "result"

    monkeypatch.setattr(devices, "run", fake_pool_run)
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # no CUDA device needed
    monkeypatch.delenv(engine.MEMORY_CAP_ENV, raising=False)
    values = dict(variant="noES", k=3, blocks=5, threads=64, blocks_per_sm=12,
                  instrument=True, side="left",
                  device_memory_gib=2.5, eager_steal=1, warp_arena_words=98,
                  idle_fraction=0.25, compact_layout=True, rounds=True, hub_divisor=8)
    g = csr.from_edges([0, 1], [0, 1], 2, 2)
    assert engine.run(g, devices=2, shards_per_device=3, shard="1/2", **values) == "result"
    assert {name: getattr(seen["params"], name) for name in values} == values
    assert (seen["devices"], seen["shards_per_device"], seen["shard"]) == (2, 3, "1/2")
    # every per-shard parameter of a single run is in the test (a new one must be passed on)
    whole_run = {"graph", "devices", "shards_per_device", "shard", "prepared"}
    assert set(inspect.signature(engine.run).parameters) - whole_run == set(values)


def test_the_gpu_clock_rate_is_read_in_khz():
    from cumbe import single_device

    class H100:
        CLOCK_RATE = 1_980_000  # kHz (numba's device attribute): 1.98 GHz

    assert single_device.clock_hz(SimpleNamespace(get_current_device=lambda: H100)) == 1.98e9


def test_a_block_wide_arena_holds_the_largest_task_whatever_its_need():
    from cumbe import buffers
    from cumbe import grid

    for warps in (1, 2, 3, 4, 8):
        base = buffers.Plan(n_u=1000, n_v=800, n_edges=5000, n_tasks=900, k=24, blocks=1,
                            warps=warps, arena_words=2)
        for need in range(1, 80):
            even = need + (need & 1)  # level sums are 8-byte aligned
            aw = next(a for a in range(2, even + 2, 2) if a * warps >= even)
            one_block = buffers.nbytes(replace(base, blocks=1, arena_words=aw))
            needs = np.array([need, 2])
            assert grid.smallest_bytes(needs, base) == one_block, (warps, need)
            c = grid.choose(needs, base, 50, one_block)
            assert c.plan.arena_words * warps >= even and c.bytes <= one_block, (warps, need)


# ------------------------------------------------------------------------- the runner


def test_the_peak_rss_is_in_bytes(tmp_path):
    csr.write_csr(csr.from_edges([0], [0], 1, 1), tmp_path / "g.csr")
    row = runner.run(dataset="toy", run_id="x", engine="survivor_fakes:memory_hog",
                     graph=tmp_path / "g.csr", params={"mib": 64}, repeats=1, timeout_s=120,
                     env={"PYTHONPATH": ENV["PYTHONPATH"]})
    assert row["status"] == "ok", row["message"]
    assert 64 << 20 <= row["peak_rss_bytes"] < 64 << 30


# ------------------------------------------------------------------ the config schema

SCHEMA_PATH = REPO / "workflow/schemas/config.schema.yaml"
BASE = {"datasets": {"g": {"konect": "g"}}}
# every bounded number of the schema: (kind, bound), kind ">" (exclusive), ">=" or "<="
BOUNDS = {
    "konect.max_member_gib": [(">", 0)],
    "download.connect_timeout_s": [(">", 0)],
    "download.read_timeout_s": [(">", 0)],
    "download.deadline_s": [(">", 0)],
    "download.retries": [(">=", 1)],
    "engines.repeats": [(">=", 1)],
    "engines.timeout_s": [(">", 0)],
    "datasets.g.shards": [(">=", 1), ("<=", 10000)],
    "datasets.g.shards_per_job": [(">=", 1)],
}
_BOUND_KEYS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")


def _bounded(schema: dict, path: str = ""):
    for name, sub in schema.get("properties", {}).items():
        key = f"{path}{name}"
        if any(k in sub for k in _BOUND_KEYS):
            yield key
        yield from _bounded(sub, key + ".")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict) and "properties" in extra:
        yield from _bounded(extra, path + "g.")


def _config(key: str, value) -> dict:
    cfg = copy.deepcopy(BASE)
    *parents, leaf = key.split(".")
    node = cfg
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = value
    return cfg


def test_every_bounded_number_of_the_schema_is_probed_here():
    schema = configcheck.load_schema(SCHEMA_PATH)
    assert set(_bounded(schema)) == set(BOUNDS)


@pytest.mark.parametrize("key", sorted(BOUNDS))
def test_the_schema_accepts_a_bound_and_refuses_what_lies_past_it(key):
    schema = configcheck.load_schema(SCHEMA_PATH)
    integer = key.endswith(("retries", "repeats", "shards", "shards_per_job"))
    step = 1 if integer else 0.001
    for kind, bound in BOUNDS[key]:
        inside, outside = {">": (bound + step, bound), ">=": (bound, bound - step),
                           "<=": (bound, bound + step)}[kind]
        assert configcheck.errors(_config(key, inside), schema) == [], (key, inside)
        lines = configcheck.errors(_config(key, outside), schema)
        assert len(lines) == 1 and lines[0].startswith(f"{key}: got {outside}; "), lines


# ------------------------------------------------------------------------ CSR offsets


@pytest.mark.parametrize("where,value", [("ro[0]", 1), ("ro[-1]", 5), ("lo[-1]", 5)])
def test_offsets_that_disagree_with_the_edge_count_are_refused(tmp_path, where, value):
    g = csr.from_edges([0, 0, 1, 2, 2, 2], [1, 3, 0, 1, 2, 3], 4, 5)
    path = tmp_path / "g.csr"
    csr.write_csr(g, path)
    raw = bytearray(path.read_bytes())

    def at(offset: int, length: int) -> int:  # 8-byte aligned arrays after a 64-byte header
        return offset + length + (-length % 8)

    lo_at = 64
    ro_at = at(at(lo_at, (g.n_left + 1) * 8), g.n_edges * 4)
    assert bytes(raw[ro_at:ro_at + (g.n_right + 1) * 8]) == g.right_offsets.astype("<i8").tobytes()
    pos = {"ro[0]": ro_at, "ro[-1]": ro_at + g.n_right * 8, "lo[-1]": lo_at + g.n_left * 8}[where]
    raw[pos:pos + 8] = struct.pack("<q", value)
    raw[48:52] = struct.pack("<I", zlib.crc32(bytes(raw[64:])))  # a valid checksum
    path.write_bytes(bytes(raw))
    with pytest.raises(csr.CSRError, match="offsets inconsistent"):
        csr.read_csr(path)
