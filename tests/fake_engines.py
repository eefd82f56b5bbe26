"""Engines that misbehave on purpose, for the runner's fault tests.

The runner imports them in its child process as ``fake_engines:<name>``
(tests put this folder on PYTHONPATH)."""

import os
import signal
import sys
import time
from pathlib import Path

from mbebench.engine import EngineResult, EngineSkipped
from mbebench.oracle import count_and_fingerprint


def oracle(graph, **_):
    count, fp = count_and_fingerprint(graph)
    return EngineResult(count, fp, algo_seconds=0.001, stats={"worker_busy_s": [0.001]})


def _record_pid(pid):
    # the tests check these processes, not every process on the machine
    if os.environ.get("MBEBENCH_TEST_PIDS"):
        with open(os.environ["MBEBENCH_TEST_PIDS"], "a") as f:
            f.write(f"{pid}\n")


def sleepy(graph, seconds=60, **_):
    # leaves a grandchild behind too: the runner must kill the whole group
    _record_pid(os.getpid())
    child = os.fork()
    if child == 0:
        time.sleep(seconds)
        os._exit(0)
    _record_pid(child)
    time.sleep(seconds)
    raise AssertionError("should have been killed")


def crash(graph, **_):
    raise RuntimeError("boom: engine failed\nsecond line")


def segfault(graph, **_):
    # an engine that crashes: SIGSEGV (a bug of the engine, recorded as an error row)
    os.kill(os.getpid(), signal.SIGSEGV)


def oom_killed(graph, **_):
    # what the kernel's OOM killer does: SIGKILL from outside (not a result, see mbebench.runner)
    os.kill(os.getpid(), signal.SIGKILL)


def skip(graph, **_):
    raise EngineSkipped("no CUDA device")


_calls = {"n": 0}


def flaky(graph, **_):
    # a different answer on each repeat: must become an error row, not a count
    _calls["n"] += 1
    return EngineResult(_calls["n"], 0, algo_seconds=0.0)


def fp_flaky(graph, **_):
    # the right count on every repeat, but another set of bicliques on the second
    _calls["n"] += 1
    count, fp = count_and_fingerprint(graph)
    return EngineResult(count, fp ^ (_calls["n"] > 1), algo_seconds=0.0)


def sleepy_alone(graph, seconds=60, **_):
    _record_pid(os.getpid())
    time.sleep(seconds)
    raise AssertionError("should have been killed")


def logged(graph, **_):
    # the oracle, appending "start end" (wall clock) to $MBEBENCH_TEST_INTERVALS: the
    # serialisation test reads back which runs overlapped.  A run stays until another run is
    # running beside it (each leaves a file in $MBEBENCH_TEST_INTERVALS.running while it runs)
    # or $MBEBENCH_TEST_WINDOW_S have passed: runs let into their slots together always
    # overlap, however many seconds their engines' imports keep them apart on a busy machine
    # (fixed 1-s and 3-s windows missed each other in CI), and runs kept apart wait the window
    t0 = time.time()
    result = oracle(graph)
    running = Path(os.environ["MBEBENCH_TEST_INTERVALS"] + ".running")
    running.mkdir(exist_ok=True)
    me = running / str(os.getpid())
    me.touch()
    end = t0 + float(os.environ.get("MBEBENCH_TEST_WINDOW_S", "5"))
    while time.time() < end and not [p for p in running.iterdir() if p != me]:
        time.sleep(0.05)
    time.sleep(0.5)  # so that the other run sees this one too
    me.unlink()
    with open(os.environ["MBEBENCH_TEST_INTERVALS"], "a") as f:
        f.write(f"{t0} {time.time()}\n")
    return result


def crown_count(graph, **_):
    """The count of the crown graph S_33 (2**33 - 2 > 2**32) and the largest fingerprint,
    whatever the graph: the row path must keep both exactly."""
    return EngineResult(2**33 - 2, 2**64 - 1, algo_seconds=0.001)


def _record(path_env: str, text: str) -> None:
    if os.environ.get(path_env):
        with open(os.environ[path_env], "a") as f:
            f.write(text + "\n")


def _targeted(var: str, shard: str) -> bool:
    """Whether $var names this shard: "1/3", or the run's progress label
    ("hubs imbea shard 1/3"); several separated by commas."""
    from mbebench.progress import label

    targets = [t.strip() for t in os.environ.get(var, "").split(",") if t.strip()]
    return shard in targets or label() in targets


def shards_imbea(graph, shard="0/1", **_):
    """iMBEA (its own defaults: any engine's spec may stand in front of it), recording each
    start in $MBEBENCH_TEST_SHARD_LOG (the progress label names the dataset, run and shard).
    The shards $MBEBENCH_TEST_KILL_SHARD names are killed from outside (SIGKILL, as the OOM
    killer does) while the file $MBEBENCH_TEST_KILL_FLAG exists; those $MBEBENCH_TEST_FAIL_SHARD
    names raise."""
    from baselines.imbea import run
    from mbebench.progress import label

    _record("MBEBENCH_TEST_SHARD_LOG", label())
    if _targeted("MBEBENCH_TEST_KILL_SHARD", shard) and os.path.exists(
            os.environ.get("MBEBENCH_TEST_KILL_FLAG", "/nonexistent")):
        os.kill(os.getpid(), signal.SIGKILL)
    if _targeted("MBEBENCH_TEST_FAIL_SHARD", shard):
        raise RuntimeError(f"boom on shard {shard}")
    return run(graph, shard=shard)


def chatty(graph, seconds=3.0, **_):
    """The oracle, after a progress line and ``seconds`` of sleep: the line must reach
    the run's log while the run goes on."""
    from mbebench.progress import header, label

    print(header("chatty", label(), (1, 1), None, time.time(), 0.5) + " | setting up",
          file=sys.stderr, flush=True)
    time.sleep(seconds)
    return oracle(graph)


def slow_units(graph, units=3, unit_s=1.0, setup_s=0.0, shard="0/1", **_):
    """The oracle, after ``setup_s`` of setup, as ``units`` units of work of ``unit_s``
    seconds each that publish their counters only between units (as an engine whose tasks
    are longer than the progress interval): the progress lines must still come on time."""
    from mbebench import progress

    count, fp = count_and_fingerprint(graph)
    time.sleep(setup_s)
    with progress.work("slow", units, float(units), shard=shard) as run:
        for i in range(units):
            time.sleep(unit_s)
            run.update(i + 1, float(i + 1), count * (i + 1) // units)
    return EngineResult(count, fp, algo_seconds=units * unit_s)
