"""Shards (``shard: "i/n"``, issue 18 item 1): the partition of first-level tasks
(:mod:`mbebench.shard`) and every engine's shards against the brute-force oracle.

The n shards of a run must count and fingerprint exactly what the whole run does;
the fingerprint is a sum mod 2**64, so a dropped or a doubled task changes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from baselines import imbea, parmbe
from mbebench import shard as sharding
from mbebench.csr import from_edges, write_csr
from mbebench.oracle import count_and_fingerprint, maximal_bicliques

REPO = Path(__file__).resolve().parents[1]
MASK = (1 << 64) - 1
NS = (1, 2, 3, 7, 64)


def random_graphs(seed, count, max_left=10, max_right=12):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        nl, nr = int(rng.integers(1, max_left + 1)), int(rng.integers(1, max_right + 1))
        m = rng.random((nl, nr)) < rng.uniform(0.15, 0.85)
        left, right = np.nonzero(m)
        out.append(from_edges(left, right, nl, nr))
    return out


def dense_with_hub(seed=3):
    """Dense enough that the whole run has many bicliques and tasks of very
    unequal cost, with one vertex adjacent to everything."""
    rng = np.random.default_rng(seed)
    m = rng.random((12, 14)) < 0.55
    m[0, :] = True
    m[:, 0] = True
    left, right = np.nonzero(m)
    return from_edges(left, right, 12, 14)


def summed(results):
    c = f = 0
    for r in results:
        c += r.count
        f = (f + r.fingerprint) & MASK
    return c, f


# --- the partition ---------------------------------------------------------------


@pytest.mark.parametrize("text,want", [("0/1", (0, 1)), ("2/3", (2, 3)), (" 6 / 7 ", (6, 7)),
                                       ("63/64", (63, 64))])
def test_parse(text, want):
    assert sharding.parse(text) == want


@pytest.mark.parametrize("bad", ["1/1", "3/2", "0/0", "-1/2", "1", "a/b", "", "0/1/2", "1.0/2",
                                 None, 3])
def test_bad_shard_is_a_one_line_error_naming_it(bad):
    with pytest.raises(ValueError) as e:
        sharding.parse(bad)
    msg = str(e.value)
    assert "\n" not in msg and repr(bad) in msg and "i/n" in msg


@pytest.mark.parametrize("n", NS)
def test_partition_covers_every_task_exactly_once(n):
    costs = np.random.default_rng(n).pareto(1.2, 500) * 100
    parts = [sharding.select(costs, i, n) for i in range(n)]
    together = np.concatenate(parts)
    assert together.size == costs.size  # nothing doubled ...
    assert np.array_equal(np.sort(together), np.arange(costs.size))  # ... nothing dropped
    for i, p in enumerate(parts):
        assert np.array_equal(p, np.sort(p))
        assert np.all(sharding.assign(costs, n)[p] == i)


def test_partition_is_deterministic_and_lpt():
    # by hand: 5 -> s0, 4 -> s1, 3 -> s1 (4 < 5), 3 -> s0 (5 < 7), 1 -> s1 (7 < 8)
    costs = [5, 4, 3, 3, 1]
    assert sharding.assign(costs, 2).tolist() == [0, 1, 1, 0, 1]
    assert sharding.select(costs, 0, 2).tolist() == [0, 3]
    rng = np.random.default_rng(0)
    costs = rng.integers(0, 1000, 3000)
    first = sharding.assign(costs, 7)
    assert np.array_equal(first, sharding.assign(costs.copy(), 7))
    assert np.array_equal(first, sharding.assign(costs.astype(np.float64), 7))
    # another process computes the same partition (no hash seeds, no dict orders)
    code = ("import numpy as np, sys; from mbebench import shard as sharding; "
            "c = np.random.default_rng(0).integers(0, 1000, 3000); "
            "sys.stdout.write(sharding.assign(c, 7).tobytes().hex())")
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                       env={**os.environ, "PYTHONHASHSEED": "123"}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == first.tobytes().hex()


def test_balanced_by_cost_not_by_count():
    # 8 heavy tasks first, then 8000 light ones: equal task counts (blocks of 1001
    # tasks, or round-robin) would give shard 0 (or every shard) a wildly unequal cost
    n = 8
    costs = np.array([1000.0] * 8 + [1.0] * 8000)
    shard_of = sharding.assign(costs, n)
    loads = np.bincount(shard_of, weights=costs, minlength=n)
    assert loads.max() <= 1.01 * loads.mean()
    blocks = np.array_split(costs, n)  # what count-balancing would do
    assert max(b.sum() for b in blocks) > 4 * loads.max()
    # each shard gets exactly one heavy task
    assert sorted(shard_of[:8].tolist()) == list(range(n))


@pytest.mark.parametrize("n", (2, 3, 7, 64))
def test_greedy_bound_on_heavy_tailed_costs(n):
    # list scheduling: no shard exceeds the mean by more than the largest task
    costs = np.random.default_rng(n).pareto(0.8, 4000)
    loads = np.bincount(sharding.assign(costs, n), weights=costs, minlength=n)
    assert np.isclose(loads.sum(), costs.sum())
    assert loads.max() <= costs.sum() / n + costs.max() + 1e-9


def test_equal_costs_spread_over_shards():
    assert np.bincount(sharding.assign(np.zeros(10), 3)).tolist() == [4, 3, 3]


def test_guided_targets_halve_and_sum_to_one():
    t = sharding.guided_targets(2, 4)
    assert t.tolist() == [0.25, 0.25, 0.125, 0.125, 0.0625, 0.0625, 0.0625, 0.0625]
    assert sharding.guided_targets(3, 1).tolist() == pytest.approx([1 / 3] * 3)
    for d, m in ((1, 1), (2, 2), (3, 5), (8, 6)):
        t = sharding.guided_targets(d, m)
        assert t.size == d * m and t.sum() == pytest.approx(1.0)
        assert (np.diff(t) <= 0).all() and t[-1] == t[-d - 1 if m > 1 else -1]
    with pytest.raises(ValueError, match="at least one device"):
        sharding.guided_targets(2, 0)


def test_weighted_partition_meets_unequal_shares():
    costs = np.random.default_rng(3).pareto(1.5, 20000)
    t = sharding.guided_targets(2, 4)
    where = sharding.assign_weighted(costs, t)
    assert set(np.unique(where)) == set(range(t.size))  # every task in exactly one shard
    shares = np.bincount(where, weights=costs, minlength=t.size) / costs.sum()
    # list scheduling towards shares: off by at most the largest task
    assert np.abs(shares - t).max() <= costs.max() / costs.sum() + 1e-9
    # the largest tasks fill the largest shards (which run first): a small shard late in the
    # run holds no task larger than an earlier shard's (by shares, each took a top task)
    largest = [costs[where == s].max() for s in range(t.size)]
    assert all(largest[j] <= largest[i] for i in range(t.size) for j in range(t.size)
               if t[j] < t[i])
    assert largest[-1] < 0.01 * largest[0]
    # equal shares are the plain partition (the same tie-breaks)
    assert (sharding.assign_weighted(costs, np.ones(7)) == sharding.assign(costs, 7)).all()
    with pytest.raises(ValueError, match="targets must be positive"):
        sharding.assign_weighted(costs, [1.0, 0.0])


# --- iMBEA ----------------------------------------------------------------------


@pytest.mark.parametrize("side", ["left", "right", "auto"])
def test_imbea_shards_sum_to_oracle(side):
    for g in random_graphs(11, 12) + [dense_with_hub()]:
        want = count_and_fingerprint(g)
        for n in NS:
            res = [imbea.run(g, side=side, shard=f"{i}/{n}") for i in range(n)]
            assert summed(res) == want, (side, n)
            assert sum(r.stats["shard_tasks"] for r in res) == res[0].stats["total_tasks"]


def test_imbea_shards_partition_the_biclique_set():
    g = dense_with_hub()
    want = maximal_bicliques(g)
    for n in (2, 3, 7):
        parts = [imbea.bicliques(g, side="left", shard=f"{i}/{n}") for i in range(n)]
        assert sum(len(p) for p in parts) == len(want)  # disjoint
        assert set().union(*parts) == want
        assert sum(1 for p in parts if p) >= 2  # the work is spread


def test_imbea_heavy_task_spreads_over_shards_and_its_pieces_partition_it():
    # the hub's task costs more than a shard's share: it is dealt out in pieces (its
    # level-0 branches round-robin), each piece in some shard, and the pieces of every
    # task, run alone, give exactly that task's bicliques
    g = dense_with_hub()
    prep, tasks = imbea.prepare(g, "left")
    costs = imbea.task_costs(prep, tasks)
    n = int(costs.sum() // costs.max()) + 2  # shards whose share the heaviest task exceeds
    nk = imbea.pieces(costs, n)
    assert nk.max() > 1 and nk.max() <= n
    assert (nk[costs <= costs.sum() / n] == 1).all()
    where: dict[int, set[int]] = {}
    for i in range(n):
        (tv, tk, tn), _ = imbea.shard_tasks(prep, tasks, f"{i}/{n}")
        for v in tv[tn > 1].tolist():
            where.setdefault(v, set()).add(i)
    assert where and max(len(s) for s in where.values()) >= 2
    for t, k in zip(tasks.tolist(), nk.tolist()):
        whole = imbea.enumerate_tasks(prep, np.array([t]))
        for kk in (k, 3):  # as the shards split it, and in 3 pieces
            parts = [imbea.enumerate_tasks(prep, (np.array([t]), np.array([j]),
                                                  np.array([kk]))) for j in range(kk)]
            assert sum(int(p[0]) for p in parts) == int(whole[0]), (t, kk)
            assert sum(int(p[1]) for p in parts) % 2**64 == int(whole[1]), (t, kk)


def test_pieces_of_pieces_partition_the_branches():
    # piece k of nk takes the level-0 branches b = k (mod nk); splitting an item again
    # must deal out exactly its branches, each to one new piece
    ks, nks, m = np.array([0, 1, 2, 0]), np.array([1, 3, 3, 1]), np.array([2, 1, 4, 1])
    src, k, nk = sharding.split_pieces(ks, nks, m)
    assert src.tolist() == [0, 0, 1, 2, 2, 2, 2, 3]
    for j in range(ks.size):
        mine = list(zip(k[src == j].tolist(), nk[src == j].tolist()))
        for b in range(72):
            hits = sum(1 for kk, nn in mine if b % nn == kk)
            assert hits == (1 if b % nks[j] == ks[j] else 0), (j, b)
    assert sharding.piece_counts([10.0, 3.0, 0.0], 4.0, 2).tolist() == [2, 1, 1]
    assert sharding.piece_counts([10.0], 4.0, 1).tolist() == [1]


def test_cumbe_heavy_task_spreads_over_shards_in_pieces_that_partition_it():
    # host side: a task costing more than a shard's share is dealt out as pieces (k, K),
    # every k < K exactly once over the shards; noRS keeps its tasks whole (its explicit Q
    # has no piece rule).  The kernel's side: tests/test_cumbe_paths.py, cumbe.selfcheck.
    from cumbe.prepare import prepare, shard_of, task_costs

    g = dense_with_hub()
    prep = prepare(g, "left", True)
    costs = task_costs(prep)
    n = int(costs.sum() // costs.max()) + 2
    items: dict[int, list] = {}
    for i in range(n):
        sp, st = shard_of(prep, f"{i}/{n}")
        assert st["shard_tasks"] == sp.tasks.size
        for v, k, nk in zip(sp.tasks.tolist(), sp.task_k.tolist(), sp.task_nk.tolist()):
            items.setdefault(v, []).append((k, nk, i))
    assert sorted(items) == sorted(prep.tasks.tolist())
    spread = False
    for v, its in items.items():
        nk = its[0][1]
        assert sorted(k for k, _, _ in its) == list(range(nk)), (v, its)
        assert all(x[1] == nk for x in its) and nk <= n
        spread |= len({s for *_, s in its}) >= 2
    assert spread
    whole = prepare(g, "left", False)
    assert all((shard_of(whole, f"{i}/{n}")[0].task_nk == 1).all() for i in range(n))


def test_imbea_row_stats_and_bad_shard():
    g = dense_with_hub()
    r = imbea.run(g, side="left", shard="1/3")
    st = r.stats
    assert st["shard"] == "1/3" and 0 < st["shard_tasks"] < st["total_tasks"]
    assert 0 < st["shard_cost"] < st["total_cost"]
    with pytest.raises(ValueError, match=r"'3/3'"):
        imbea.run(g, shard="3/3")


# --- ParMBE ---------------------------------------------------------------------


@pytest.mark.parametrize("side", ["smaller", "larger"])
def test_parmbe_shards_sum_to_oracle(side):
    # shards run with different process counts: the partition must not depend on it;
    # split_threshold 1 splits most subproblems into pieces (first-level branches)
    for j, g in enumerate(random_graphs(12, 10) + [dense_with_hub()]):
        want = count_and_fingerprint(g)
        for n in NS:
            res = [parmbe.run_serial(g, processes=1 + (i + j) % 4, side=side,
                                     split_threshold=[1, 4, -1][j % 3], max_split=8,
                                     shard=f"{i}/{n}")
                   for i in range(n)]
            assert summed(res) == want, (side, n, j)
            assert sum(r.stats["shard_tasks"] for r in res) == res[0].stats["total_tasks"]


def test_parmbe_heavy_subproblem_spreads_over_shards():
    # with the tail rule off (split_threshold -1), a subproblem is split only for its
    # estimated cost: its pieces (first-level branches k mod K) go to different shards
    g = dense_with_hub()
    prep = parmbe._Prepared(g, True)
    n = 4
    where: dict[int, set[int]] = {}
    for i in range(n):
        plan = parmbe.plan_tasks(prep, 1, -1, 8, None, 8, shard=f"{i}/{n}")
        for v in plan.verts[plan.nks > 1].tolist():
            where.setdefault(v, set()).add(i)
    assert where and max(len(s) for s in where.values()) >= 2


def test_parmbe_pool_shards_sum_to_oracle():
    g = dense_with_hub()
    want = count_and_fingerprint(g)
    with parmbe.ParMBEPool(2) as pool:
        for n in (1, 3):
            res = [parmbe.run(g, pool=pool, split_threshold=2, shard=f"{i}/{n}")
                   for i in range(n)]
            assert summed(res) == want
            assert all(r.stats["shard"] == f"{i}/{n}" for i, r in enumerate(res))
        with pytest.raises(ValueError, match=r"'0/-1'"):
            parmbe.run(g, pool=pool, shard="0/-1")


# --- cuMBE in the CUDA simulator (a child process: the simulator is switched on
# before numba.cuda is imported) -----------------------------------------------------

CUMBE_CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from mbebench.csr import from_edges
    from mbebench.oracle import count_and_fingerprint
    from cumbe.engine import run
    MASK = (1 << 64) - 1
    rng = np.random.default_rng(5)
    out = []
    for j, variant in enumerate(["cuMBE", "noRS", "noWS"]):
        nl, nr = int(rng.integers(4, 8)), int(rng.integers(4, 8))
        m = rng.random((nl, nr)) < 0.55
        l, r = np.nonzero(m)
        g = from_edges(l, r, nl, nr)
        want = list(count_and_fingerprint(g))
        for n in (1, 2, 3, 7, 64):
            c = f = tasks = 0
            for i in range(n):
                res = run(g, variant=variant, threads=32, blocks=1, side=["left", "right"][j % 2],
                          shard=f"{i}/{n}")
                c += res.count
                f = (f + res.fingerprint) & MASK
                tasks += res.stats["shard_tasks"]
            out.append({"variant": variant, "n": n, "got": [c, f], "want": want,
                        "tasks": tasks, "total": res.stats["total_tasks"]})
    print(json.dumps(out))
""")


def _child(args, sim=True, timeout=600):
    env = dict(os.environ)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.cudasim
def test_cumbe_shards_sum_to_oracle_in_simulator():
    p = _child(["-c", CUMBE_CHILD])
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(out) == 15
    for o in out:
        assert o["got"] == o["want"], o
        assert o["tasks"] == o["total"], o


def test_cumbe_cli_bad_shard_is_one_line(tmp_path):
    path = tmp_path / "g.csr"
    write_csr(from_edges([0, 0, 1], [0, 1, 1], 2, 2), path)
    p = _child(["-m", "cumbe", "run", str(path), "--shard", "2/2"], sim=False, timeout=120)
    assert p.returncode == 1
    err = p.stderr.strip()
    assert "\n" not in err and "'2/2'" in err and err.startswith("error: shard")


@pytest.mark.cudasim
def test_cumbe_cli_shards_in_simulator(tmp_path):
    g = dense_with_hub()
    path = tmp_path / "g.csr"
    write_csr(g, path)
    got = []
    for i in range(2):
        out = tmp_path / f"s{i}.json"
        p = _child(["-m", "cumbe", "run", str(path), "--threads", "32", "--shard", f"{i}/2",
                    "--json", str(out)])
        assert p.returncode == 0, p.stderr[-2000:]
        got.append(json.loads(out.read_text()))
    assert [r["stats"]["shard"] for r in got] == ["0/2", "1/2"]
    c, f = count_and_fingerprint(g)
    assert sum(r["count"] for r in got) == c
    assert sum(int(r["fingerprint"], 16) for r in got) & MASK == f


# --- config and plan -------------------------------------------------------------


def test_every_engine_of_ours_declares_shard():
    """Ours split their first-level tasks; a published code runs a graph whole (it has no
    shard option), so a sharded dataset with one enabled is a config error naming it."""
    from mbebench.engine import ENGINES, get_spec

    published = {n for n, where in ENGINES.items() if where.startswith("mbebench.published")}
    assert published == {"adambe", "oombea", "gmbe", "cumbe_orig"}
    for name in set(ENGINES) - published:
        p = get_spec(name).param("shard")
        assert p.default == "0/1" and p.type is str
    for name in published:
        assert "shard" not in {p.name for p in get_spec(name).params}


def test_config_shard_is_checked_and_a_list_plans_distinct_runs():
    import yaml
    from snakemake.utils import validate

    from mbebench import plan
    from mbebench.spec import ConfigError

    cfg = yaml.safe_load((REPO / ".test" / "config" / "config.yaml").read_text())
    validate(cfg, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))  # fills defaults
    cfg["engines"].setdefault("imbea", {})["shard"] = ["0/2", "1/2"]
    runs = [r for r in plan.plan_runs(cfg, cores=2).values() if r.engine == "imbea"]
    assert [r.params["shard"] for r in runs] == ["0/2", "1/2"]
    assert len({r.run_id for r in runs}) == 2
    assert all("/" not in r.run_id for r in runs)  # run ids are file names
    cfg["engines"]["imbea"]["shard"] = "half"
    with pytest.raises(ConfigError, match="engines.imbea.shard"):
        plan.plan_runs(cfg, cores=2)


def test_rows_record_the_shard_and_shard_rows_sum(tmp_path):
    # the pipeline's path: plan -> runner (child process) -> row
    from mbebench import plan, runner

    g = dense_with_hub()
    path = tmp_path / "g.csr"
    write_csr(g, path)
    c = f = 0
    for i in range(3):
        spec = plan.direct_run("imbea", {"shard": f"{i}/3", "side": "left"}, f"imbea-s{i}")
        job = spec.job()
        row = runner.run(dataset="g", run_id=spec.run_id, engine=job["engine"], graph=path,
                         params=job["params"], entry=job["entry"], label=job["label"],
                         timeout_s=300)
        assert row["status"] == "ok", row["message"]
        assert row["params"]["shard"] == f"{i}/3" and row["stats"]["shard"] == f"{i}/3"
        assert {"shard_tasks", "shard_cost", "total_tasks", "total_cost"} <= set(row["stats"])
        c += row["count"]
        f = (f + int(row["fingerprint"], 16)) & MASK
    assert (c, f) == count_and_fingerprint(g)
