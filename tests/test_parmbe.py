"""ParMBE (baselines/parmbe.py): exactness against the brute-force oracle, the
task decomposition (splits), the process pool, and clean shutdown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baselines import parmbe
from mbebench.csr import from_edges, read_csr, write_csr
from mbebench.oracle import count_and_fingerprint

REPO = Path(__file__).resolve().parents[1]


def graph_from_matrix(m: np.ndarray):
    m = np.asarray(m, dtype=bool)
    left, right = np.nonzero(m)
    return from_edges(left, right, m.shape[0], m.shape[1])


def random_graph(rng, n_left, n_right, p):
    return graph_from_matrix(rng.random((n_left, n_right)) < p)


def hub_graph(n_left=40, n_right=60, m=120, hubs=2, hub_deg=30, seed=0):
    """Sparse random graph plus a few vertices of very high degree on both sides."""
    rng = np.random.default_rng(seed)
    lft = [rng.integers(0, n_left, m)]
    rgt = [rng.integers(0, n_right, m)]
    for h in range(hubs):
        k = min(hub_deg, n_right)
        lft.append(np.full(k, h))
        rgt.append(rng.choice(n_right, k, replace=False))
        k = min(hub_deg, n_left)
        rgt.append(np.full(k, h))
        lft.append(rng.choice(n_left, k, replace=False))
    return from_edges(np.concatenate(lft), np.concatenate(rgt), n_left, n_right)


@pytest.fixture(scope="module")
def pool():
    with parmbe.ParMBEPool(2) as p:
        yield p


@st.composite
def small_graphs(draw):
    n_left = draw(st.integers(0, 9))
    n_right = draw(st.integers(0, 12))
    p = draw(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]))
    seed = draw(st.integers(0, 2**32 - 1))
    return random_graph(np.random.default_rng(seed), n_left, n_right, p)


# --- in-process: the very same decomposition, many graphs ------------------


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    g=small_graphs(),
    threshold=st.sampled_from([-1, 0, 1, 2, 3, 2048]),
    side=st.sampled_from(["smaller", "larger", "left", "right"]),
)
def test_serial_matches_oracle(g, threshold, side):
    res = parmbe.run_serial(g, split_threshold=threshold, side=side)
    assert (res.count, res.fingerprint) == count_and_fingerprint(g)


def test_serial_splits_happen():
    g = hub_graph(n_left=14, n_right=30, m=40, hubs=2, hub_deg=12, seed=3)
    res = parmbe.run_serial(g, split_threshold=1)
    assert res.stats["split_tasks"] > 0
    assert (res.count, res.fingerprint) == count_and_fingerprint(g)


@pytest.mark.parametrize("processes, threshold", [(1, -1), (2, 2048), (16, 3), (64, 0)])
def test_plan_covers_every_subproblem_once(processes, threshold):
    g = hub_graph(n_left=60, n_right=90, m=300, hubs=3, hub_deg=50, seed=4)
    prep = parmbe._Prepared(g, True)
    plan = parmbe.plan_tasks(prep, processes, threshold)
    items = sorted(zip(plan.verts.tolist(), plan.ks.tolist(), plan.nks.tolist()))
    pieces: dict[int, list] = {}
    for v, k, kk in items:
        pieces.setdefault(v, []).append((k, kk))
    assert sorted(pieces) == np.flatnonzero(np.diff(prep.uo) > 0).tolist()
    for v, ps in pieces.items():
        kk = ps[0][1]
        assert ps == [(k, kk) for k in range(kk)], v
    assert plan.bounds[0] == 0 and plan.bounds[-1] == len(items)
    assert np.all(np.diff(plan.bounds) > 0)
    for i in range(plan.n_tasks):  # a split subproblem's pieces are tasks of their own
        _, _, nks = plan.task(i)
        assert nks.max() == 1 or len(nks) == 1
    if processes == 64:
        assert plan.n_split > 0 and plan.n_tasks > 64
    res = parmbe.run_serial(g, processes=processes, split_threshold=threshold)
    ref = parmbe.run_serial(g, processes=1, split_threshold=-1, tasks_per_process=1)
    assert ref.stats["tasks"] == 1 and ref.count > 100
    assert (res.count, res.fingerprint) == (ref.count, ref.fingerprint)


# --- explicit graphs ---------------------------------------------------------

EXPLICIT = {
    "empty-0x0": np.zeros((0, 0), bool),
    "no-edges-3x4": np.zeros((3, 4), bool),
    "single-edge": np.ones((1, 1), bool),
    "star-left-centre": np.ones((1, 7), bool),
    "star-right-centre": np.ones((7, 1), bool),
    "K_3x5": np.ones((3, 5), bool),
    "K_6x2": np.ones((6, 2), bool),
    "isolated": np.pad(np.eye(3, dtype=bool) | np.eye(3, k=1, dtype=bool), ((2, 1), (0, 3))),
    "crown-5": ~np.eye(5, dtype=bool),
}
EXPECTED_COUNT = {
    "empty-0x0": 0,
    "no-edges-3x4": 0,
    "single-edge": 1,
    "star-left-centre": 1,
    "star-right-centre": 1,
    "K_3x5": 1,
    "K_6x2": 1,
    "crown-5": 2**5 - 2,
}


@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_explicit_serial(name):
    g = graph_from_matrix(EXPLICIT[name])
    expected = count_and_fingerprint(g)
    if name in EXPECTED_COUNT:
        assert expected[0] == EXPECTED_COUNT[name]
    for side in ("left", "right"):
        for threshold in (-1, 0):
            res = parmbe.run_serial(g, split_threshold=threshold, side=side)
            assert (res.count, res.fingerprint) == expected, (side, threshold)


def test_explicit_pool(pool):
    for name, m in EXPLICIT.items():
        g = graph_from_matrix(m)
        res = parmbe.run(g, pool=pool, split_threshold=0)
        assert (res.count, res.fingerprint) == count_and_fingerprint(g), name


# --- the process pool ----------------------------------------------------------


def test_pool_random_graphs_match_oracle(pool):
    rng = np.random.default_rng(2024)
    for i in range(12):
        g = random_graph(rng, int(rng.integers(1, 14)), int(rng.integers(1, 30)), rng.random())
        res = parmbe.run(g, pool=pool, split_threshold=[-1, 0, 2][i % 3])
        assert (res.count, res.fingerprint) == count_and_fingerprint(g), i


def test_hub_graph_oracle_and_pool(pool):
    g = hub_graph(n_left=16, n_right=70, m=60, hubs=2, hub_deg=40, seed=1)
    expected = count_and_fingerprint(g)
    res = parmbe.run(g, pool=pool, split_threshold=4)
    assert (res.count, res.fingerprint) == expected
    assert res.stats["split_tasks"] > 0


def test_split_threshold_does_not_change_result(pool, tmp_path):
    rng = np.random.default_rng(5)
    g = random_graph(rng, 60, 90, 0.12)
    path = tmp_path / "g.csr"
    write_csr(g, path)
    g = read_csr(path)
    ref = parmbe.run_serial(g, split_threshold=-1)
    assert ref.count > 500
    seen = set()
    for threshold in (0, 1, 7, 40, -1):
        for side in ("left", "right"):
            res = parmbe.run(g, pool=pool, split_threshold=threshold, side=side)
            seen.add((res.count, res.fingerprint))
            if threshold in (0, 1):
                assert res.stats["split_tasks"] > 0
    assert seen == {(ref.count, ref.fingerprint)}


def test_big_hub_graph_is_fast_and_consistent(pool):
    # Hubs on both sides make every vertex's 2-hop neighbourhood the whole
    # side: the shape on which the C++ ParMBE takes minutes.
    g = hub_graph(n_left=600, n_right=600, m=3000, hubs=2, hub_deg=400, seed=2)
    t0 = time.perf_counter()
    a = parmbe.run(g, pool=pool, split_threshold=64)
    b = parmbe.run(g, pool=pool, split_threshold=-1, side="larger")
    assert time.perf_counter() - t0 < 30
    assert a.stats["split_tasks"] > 0
    assert (a.count, a.fingerprint) == (b.count, b.fingerprint)


def test_stats_and_interface(pool):
    g = random_graph(np.random.default_rng(9), 30, 40, 0.2)
    res = parmbe.run(g, pool=pool)
    s = res.stats
    assert s["processes"] == 2
    assert len(s["worker_busy_s"]) == len(s["worker_tasks"]) == len(s["worker_cpu_s"]) == 2
    assert sum(s["worker_tasks"]) == s["tasks"] > 0
    assert s["split_tasks"] == 0 and s["pool_start_s"] > 0
    assert min(s["plan_s"], s["ramp_s"], s["end_spread_s"]) >= 0
    assert res.algo_seconds > 0 and res.compile_seconds > 0
    assert 0 <= res.fingerprint < 2**64


def test_tasks_per_process_does_not_change_result(pool):
    g = hub_graph(n_left=16, n_right=120, m=200, hubs=2, hub_deg=60, seed=6)
    expected = count_and_fingerprint(g)
    for tpp in (1, 4, 32, 500):
        res = parmbe.run(g, pool=pool, tasks_per_process=tpp)
        assert (res.count, res.fingerprint) == expected, tpp
        assert sum(res.stats["worker_tasks"]) == res.stats["tasks"]


def test_registered_engine_with_own_pool():
    from mbebench.engine import get_engine

    g = random_graph(np.random.default_rng(11), 10, 15, 0.4)
    res = get_engine("parmbe")(g, processes=2)
    assert (res.count, res.fingerprint) == count_and_fingerprint(g)
    assert res.stats["processes"] == 2


@pytest.mark.mirror
def test_ucforum_known_count(konect_mirror, tmp_path, pool):
    from mbebench.convert import convert

    csr = tmp_path / "ucforum.csr"
    convert(
        "opsahl-ucforum",
        out_csr=csr,
        out_meta=tmp_path / "ucforum.json",
        archive=konect_mirror / "download.tsv.opsahl-ucforum.tar.bz2",
    )
    g = read_csr(csr)
    res = parmbe.run(g, pool=pool)
    assert res.count == 16261  # the published number of maximal bicliques
    ser = parmbe.run_serial(g, side="larger", split_threshold=50)
    assert (ser.count, ser.fingerprint) == (res.count, res.fingerprint)


# --- shutdown: no orphan survives ---------------------------------------------------

_LONG_JOB = textwrap.dedent(
    """
    import faulthandler
    import signal
    import sys
    import numpy as np
    from baselines import parmbe

    # the test asks for every thread's stack (SIGUSR1) when this process does not exit
    faulthandler.register(signal.SIGUSR1, file=open("stacks.txt", "w"), all_threads=True)
    from mbebench.csr import from_edges

    def main():
        rng = np.random.default_rng(0)
        left, right = np.nonzero(rng.random((300, 300)) < 0.5)  # takes hours
        g = from_edges(left, right, 300, 300)
        orig = parmbe.ParMBEPool.execute

        def execute(self, *a, **k):
            print("EXEC", flush=True)
            return orig(self, *a, **k)

        parmbe.ParMBEPool.execute = execute
        parmbe.run(g, processes=2)
        print("DONE", flush=True)

    if __name__ == "__main__":
        main()
    """
)


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def _descendants(pid: int) -> set[int]:
    kids = _children()
    out, todo = set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _foreground_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _sigint_ignored(pid: int) -> bool:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("SigIgn:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["sigterm-parent", "sigint-group"])
def test_interrupt_leaves_no_orphans(tmp_path, how):
    script = tmp_path / "long_job.py"
    script.write_text(_LONG_JOB)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
        env=env,
        start_new_session=True,
        # Ctrl-C as in a terminal, where the job runs in the foreground.  A shell starts a
        # background job (`cmd &`, as CI may run the suite) with SIGINT ignored; the test
        # process and then this job inherit that, Python keeps it ignored, and the job rightly
        # never sees the Ctrl-C: that, not ParMBE, was the "hang" of 2 in 3 CI runs.
        preexec_fn=_foreground_signals,
    )
    try:
        assert proc.stdout.readline().strip() == "EXEC"
        time.sleep(1.5)  # workers are busy in the kernel now
        kids = _descendants(proc.pid)
        busy = [p for p in kids if _alive(p)]
        assert len(busy) >= 2, "expected the worker processes"
        assert not _sigint_ignored(proc.pid)
        if how == "sigterm-parent":
            os.kill(proc.pid, signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole group
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGUSR1)
            time.sleep(1)
            stacks = (tmp_path / "stacks.txt").read_text()
            alive = {p: _alive(p) for p in kids}
            pytest.fail(f"the parent did not exit within 30 s of {how}; workers alive: {alive}; "
                        f"its threads:\n{stacks}")
        assert rc != 0
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(p) for p in kids):
            time.sleep(0.1)
        survivors = [p for p in kids if _alive(p)]
        assert not survivors, f"orphans left: {survivors}"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_terminate_returns_when_a_dead_worker_holds_the_task_queue_lock():
    # An idle worker waits for tasks holding the task queue's read lock; killed there, it never
    # releases it, and multiprocessing's Pool.terminate then waits for that lock for ever.
    # terminate() must still return, and leave no worker (the pool starts new ones) alive.
    pool = parmbe.ParMBEPool(2)
    for pid in pool.pids:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in pool.pids):
        time.sleep(0.05)
    # in a thread, so that a regression fails here instead of hanging the suite
    stopper = threading.Thread(target=pool.terminate, kwargs={"grace_s": 0.5}, daemon=True)
    stopper.start()
    stopper.join(10)
    assert not stopper.is_alive(), "terminate() hangs on the dead worker's lock"
    procs = [w.pid for w in pool._pool._pool if w.pid is not None]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in procs):
        time.sleep(0.05)
    assert not [p for p in procs if _alive(p)], "workers survived terminate()"
    t0 = time.monotonic()
    pool.terminate(grace_s=0.5)  # again: nothing left to do
    assert time.monotonic() - t0 < 0.5


def test_pool_workers_are_forked_with_the_kernels_loaded(pool):
    """The forkserver imports ParMBE and loads its kernels once (baselines.parmbe_preload):
    every worker starts as a fork of it, not by importing numba and loading them again, and
    has nothing to warm up (a warm-up of loaded kernels in each of 16 workers was half the
    pool's start on 2 cores)."""
    assert pool.preloaded == [True] * pool.processes
    assert pool.compile_times == [0.0] * pool.processes


def test_pool_forks_from_the_parent_only_when_that_is_sound():
    """One thread and numba's threading layer not started: the parent forks the workers
    (no forkserver to start); with another thread alive (the runner's progress thread), a
    fork could inherit a lock held for ever, so the forkserver starts them."""
    from baselines import parmbe_pool

    assert parmbe_pool.resolve_start_method("forkserver") == "forkserver"
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        assert not parmbe_pool.fork_safe()
        assert parmbe_pool.resolve_start_method() == "forkserver"
        with parmbe.ParMBEPool(2) as p:
            assert p.start_method == "forkserver" and p.preloaded == [True, True]
            g = random_graph(np.random.default_rng(3), 9, 11, 0.4)
            res = parmbe.run(g, pool=p)
            assert (res.count, res.fingerprint) == count_and_fingerprint(g)
    finally:
        stop.set()
        t.join()
    if threading.active_count() == 1:
        assert parmbe_pool.resolve_start_method() == "fork"
