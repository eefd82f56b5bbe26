"""Run one engine on one dataset and write one result row.

The engine runs in a child process in its own process group, so that a run
past ``timeout_s`` (or one that crashes the interpreter, or leaves worker
processes behind) is killed as a whole and recorded as a ``timeout`` or
``error`` row, while the pipeline goes on.  Only a run that finished and
returned an :class:`~mbebench.engine.EngineResult` yields a count.

A Python engine is called in the child; a command-line engine
(:mod:`mbebench.command`) is started by it, inside the same process group.
The row's ``message`` is one line; the child's whole stderr, tracebacks
included, goes to this process's stderr (the rule's log).

A run that failed because of its input or the machine is not a result: a CSR
file that is missing or fails its checks, or an engine process killed by a
signal that neither the engine nor this runner sent (the kernel's OOM killer
sends SIGKILL).  :func:`run` raises :class:`RunNotFinal` for those and no row
is written, so Snakemake runs the job again next time (a bad CSR is first
moved aside by :func:`quarantine`, so that the convert step rebuilds it).
Timeouts and engine failures stay rows: running them again gives the same.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from mbebench import atomic
from mbebench.environment import environment
from mbebench.fingerprint import to_hex

# 3: status "unavailable", the "env" field
SCHEMA_VERSION = 3
KILL_GRACE_S = 5.0
# Signals that end an engine process from outside (the OOM killer, an admin, a
# scheduler); a crash of the engine itself is SIGSEGV, SIGABRT, SIGBUS, ...
OUTSIDE_SIGNALS = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT})


class RunNotFinal(RuntimeError):
    """The run failed because of its input or the machine: no row, the job fails, a rerun redoes it.

    ``bad_input`` is the input file to move aside (:func:`quarantine`), if any.
    """

    def __init__(self, message: str, bad_input: str | None = None):
        super().__init__(message)
        self.bad_input = bad_input


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _host() -> dict[str, Any]:
    return {
        "hostname": socket.gethostname(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _peak_rss_bytes() -> int:
    # ru_maxrss is KiB on Linux; children covers ParMBE's worker processes.
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return int(max(own, kids) * 1024)


def _one_line(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".splitlines()[0].split())


def child_main(spec: dict[str, Any]) -> dict[str, Any]:
    """Runs inside the child process: load the graph, run the engine ``repeats`` times."""
    from mbebench.csr import CSRError, read_csr
    from mbebench.engine import EngineSkipped, call_params, get_engine

    try:
        graph = read_csr(spec["graph"])
    except CSRError as e:  # the input, not the engine: not a result (see RunNotFinal)
        return {"status": "bad_input", "message": str(e).splitlines()[0]}
    try:
        if spec.get("command"):
            from mbebench import command

            graph_file = spec.get("input_path") or spec["graph"]

            def once():
                return command.run(spec["command"], graph_file, graph, spec["params"])
        else:
            engine = get_engine(spec.get("entry") or spec["engine"])
            params = call_params(spec["params"])

            def once():
                return engine(graph, **params)

        algo, wall, results = [], [], []
        for _ in range(int(spec["repeats"])):
            t0 = time.perf_counter()
            res = once()
            wall.append(time.perf_counter() - t0)
            algo.append(float(res.algo_seconds))
            results.append(res)
    except EngineSkipped as e:
        return {"status": "skipped", "message": str(e)}
    except Exception as e:  # any engine failure becomes an error row, never a count
        traceback.print_exc()  # the log keeps what the one-line message leaves out
        return {"status": "error", "message": _one_line(e)}
    counts = {(r.count, r.fingerprint) for r in results}
    if len(counts) != 1:
        seen = sorted((c, to_hex(f) if f is not None else None) for c, f in counts)
        return {"status": "error", "message": f"repeats disagree: {seen}"}
    first = results[0]
    return {
        "status": "ok",
        "message": None,
        "count": int(first.count),
        "fingerprint": to_hex(first.fingerprint) if first.fingerprint is not None else None,
        "algo_s": algo,
        "wall_s": wall,
        "compile_s": float(first.compile_seconds),
        "stats": results[-1].stats,
        "graph": {"n_left": graph.n_left, "n_right": graph.n_right, "n_edges": graph.n_edges},
        "peak_rss_bytes": _peak_rss_bytes(),
    }


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=KILL_GRACE_S)
            # the leader is gone; make sure nothing it started lingers
            os.killpg(proc.pid, signal.SIGKILL)
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            return


def run(
    *,
    dataset: str,
    run_id: str,
    engine: str,
    graph: str | os.PathLike,
    params: dict[str, Any],
    repeats: int = 1,
    timeout_s: float = 3600.0,
    env: dict[str, str] | None = None,
    label: str | None = None,
    variant: str | None = None,
    timed: bool = True,
    simulated: bool = False,
    entry: str | None = None,
    command: list[str] | None = None,
    input_path: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Run the engine in a child process and return the result row (not written).

    ``engine`` is the engine's name (a registered one, or a ``module:function``
    when ``entry`` and ``command`` are not given); ``label``, ``variant`` and
    ``timed`` describe the run for the tables (:class:`mbebench.plan.RunSpec`);
    ``input_path`` is the graph file a command-line engine reads when it is not
    the CSR ``graph``.
    """
    spec = {"engine": engine, "entry": entry, "command": command, "graph": str(graph),
            "input_path": str(input_path) if input_path else None, "params": params,
            "repeats": repeats}
    row: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "dataset": dataset,
        "run_id": run_id,
        "engine": engine,
        "label": label or run_id,
        "variant": variant,
        "params": params,
        "timed": bool(timed),
        "entry": entry,
        "command": command,
        "repeats": repeats,
        "timeout_s": timeout_s,
        "host": _host(),
        "env": None,
        "started_at": _now(),
        "count": None,
        "fingerprint": None,
        "algo_s": [],
        "wall_s": [],
        "algo_s_median": None,
        "compile_s": None,
        "peak_rss_bytes": None,
        "graph": None,
        "stats": {},
        # a simulator (numba's CUDA simulator) runs on the CPU: counts are real, times are not
        "simulated": bool(simulated),
    }
    with tempfile.TemporaryDirectory(prefix="mbe-run-") as tmp:
        out = Path(tmp) / "result.json"
        err = Path(tmp) / "stderr.txt"
        cmd = [sys.executable, "-m", "mbebench.runner", json.dumps(spec), str(out)]
        child_env = {**os.environ, **(env or {})}
        with open(err, "wb") as errf:
            proc = subprocess.Popen(
                cmd, stdout=errf, stderr=errf, start_new_session=True, env=child_env
            )
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                row.update(status="timeout", message=f"timed out after {timeout_s:g} s")
            except BaseException:
                _kill_group(proc)
                raise
            else:
                # workers the engine failed to reap must not outlive the run
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        log = err.read_text(errors="replace")
        if log:
            sys.stderr.write(log)
        killed_by = -proc.returncode if proc.returncode and proc.returncode < 0 else None
        if "status" not in row:
            if out.is_file():
                result = json.loads(out.read_text())
                if result["status"] == "bad_input":
                    raise RunNotFinal(f"dataset {dataset!r}: {result['message']}",
                                      bad_input=str(graph))
                row.update(result)
            elif killed_by in OUTSIDE_SIGNALS:
                name = signal.Signals(killed_by).name
                raise RunNotFinal(
                    f"dataset {dataset!r} run {run_id}: the engine process was killed by {name}"
                    " from outside (the OS out of memory, or an admin); not recorded, the next"
                    " run retries it")
            else:
                last = next((ln for ln in reversed(log.splitlines()) if ln.strip()), "")
                row.update(
                    status="error",
                    message=f"engine process exited with code {proc.returncode}"
                    + (f": {last.strip()}" if last else ""),
                )
    if row["algo_s"]:
        row["algo_s_median"] = statistics.median(row["algo_s"])
    row["env"] = environment()  # after the run: nothing here shares the machine with it
    row["finished_at"] = _now()
    return row


def unavailable_row(*, dataset: str, run_id: str, engine: str, params: dict[str, Any],
                    reason: str, label: str | None = None, variant: str | None = None,
                    timed: bool = True, repeats: int = 1, timeout_s: float = 3600.0,
                    simulated: bool = False, entry: str | None = None,
                    command: list[str] | None = None) -> dict[str, Any]:
    """The row of a run that could not start because its dataset is unavailable (its
    download or convert failed; ``reason`` says why).  Nothing is run."""
    now = _now()
    return {
        "schema_version": SCHEMA_VERSION, "dataset": dataset, "run_id": run_id,
        "engine": engine, "label": label or run_id, "variant": variant, "params": params,
        "timed": bool(timed), "entry": entry, "command": command, "repeats": repeats,
        "timeout_s": timeout_s, "host": _host(), "env": environment(), "started_at": now,
        "status": "unavailable", "message": " ".join(reason.split()), "count": None,
        "fingerprint": None, "algo_s": [], "wall_s": [], "algo_s_median": None,
        "compile_s": None, "peak_rss_bytes": None, "graph": None, "stats": {},
        "simulated": bool(simulated), "finished_at": now,
    }


def quarantine(path: str | os.PathLike) -> Path | None:
    """Move a bad input file aside to ``<name>.bad`` (kept for a look; replaces an older
    one), so that the step that makes it runs again.  Returns the new path, or None
    when there was nothing to move."""
    path = Path(path)
    bad = path.with_name(path.name + ".bad")
    try:
        os.replace(path, bad)
    except FileNotFoundError:
        return None
    return bad


def run_and_write(out: str | os.PathLike, **kwargs) -> dict[str, Any]:
    row = run(**kwargs)
    atomic.write_json(out, row)
    return row


def _die_with_parent() -> None:
    """The child has its own session (so a timeout can kill its group), which also
    shields it from a kill of Snakemake's group: ask Linux to kill it with its parent."""
    try:
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    except OSError:  # not Linux/glibc: the orphan finishes, its result is never read
        pass
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def _child_entry(argv: list[str]) -> int:
    _die_with_parent()
    spec = json.loads(argv[0])
    result = child_main(spec)
    atomic.write_json(argv[1], result)
    return 0


if __name__ == "__main__":
    sys.exit(_child_entry(sys.argv[1:]))
