"""Engines that misbehave on purpose, for the runner's fault tests.

The runner imports them in its child process as ``fake_engines:<name>``
(tests put this folder on PYTHONPATH)."""

import os
import signal
import time

from mbebench.engine import EngineResult, EngineSkipped
from mbebench.oracle import count_and_fingerprint


def oracle(graph, **_):
    count, fp = count_and_fingerprint(graph)
    return EngineResult(count, fp, algo_seconds=0.001, stats={"worker_busy_s": [0.001]})


def _record_pid(pid):
    # the tests check these processes, not every process on the machine
    if os.environ.get("MBE_TEST_PIDS"):
        with open(os.environ["MBE_TEST_PIDS"], "a") as f:
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
    # the oracle, 1 s long, appending "start end" (wall clock) to $MBE_TEST_INTERVALS:
    # the serialisation test reads back which runs overlapped
    t0 = time.time()
    result = oracle(graph)
    time.sleep(1.0)
    with open(os.environ["MBE_TEST_INTERVALS"], "a") as f:
        f.write(f"{t0} {time.time()}\n")
    return result


def crown_count(graph, **_):
    """The count of the crown graph S_33 (2**33 - 2 > 2**32) and the largest fingerprint,
    whatever the graph: the row path must keep both exactly."""
    return EngineResult(2**33 - 2, 2**64 - 1, algo_seconds=0.001)
