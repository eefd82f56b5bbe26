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

import codecs
import datetime as _dt
import json
import os
import platform
import re
import resource
import signal
import socket
import stat
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mbebench import atomic, row_schema
from mbebench.environment import environment
from mbebench.oneline import one_line, typed_error_line

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


def _load(spec: dict[str, Any]):
    """The graph and a function running one item's params once (in the child)."""
    from mbebench.csr import read_csr
    from mbebench.engine import call_params, get_engine

    graph = read_csr(spec["graph"])
    if spec.get("command"):
        from mbebench import command

        graph_file = spec.get("input_path") or spec["graph"]
        return graph, lambda params: command.run(spec["command"], graph_file, graph, params)
    engine = get_engine(spec.get("entry") or spec["engine"])
    return graph, lambda params: engine(graph, **call_params(params))


def _run_item(graph, once, params: dict[str, Any], repeats: int,
              engine: str = "run") -> dict[str, Any]:
    """One item (one row): the engine ``repeats`` times on ``params`` (in the child)."""
    from mbebench import progress
    from mbebench.engine import EngineSkipped
    from mbebench.fingerprint import to_hex

    # the progress lines name the engine, the repeat and its seconds from its start on
    name = re.sub(r"[^\w.+-]", "_", engine.rsplit(":", 1)[-1]) or "run"
    try:
        algo, wall, results = [], [], []
        for r in range(int(repeats)):
            t0 = time.perf_counter()
            with progress.repeat(name, r + 1, int(repeats), shard=params.get("shard")):
                res = once(params)
            wall.append(time.perf_counter() - t0)
            algo.append(float(res.algo_seconds))
            results.append(res)
    except EngineSkipped as e:
        return {"status": "skipped", "message": str(e)}
    except Exception as e:  # any engine failure becomes an error row, never a count
        traceback.print_exc()  # the log keeps what the one-line message leaves out
        return {"status": "error", "message": typed_error_line(e)}
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
        # what each call cost beside the algorithm (preparation, copies, pool start ...)
        "setup_s": [max(0.0, w - a) for w, a in zip(wall, algo)],
        "compile_s": float(first.compile_seconds),
        "stats": results[-1].stats,
        "graph": {"n_left": graph.n_left, "n_right": graph.n_right, "n_edges": graph.n_edges},
        # the process's peak so far: with several items, of this one and those before it
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


# How often the runner looks at its child: for a finished item, the timeout, and to touch
# its log (HEARTBEAT_S), so that `python -m mbebench status` can tell a running run (a
# recent log, even from an engine that prints nothing) from one that was killed.
POLL_S = 0.25
HEARTBEAT_S = 5.0


class _LogTail:
    """Copies what the child writes to its stderr file into this process's stderr (the
    rule's log) as it comes, so that progress lines are there while the run goes on."""

    def __init__(self, path: Path):
        self.path = path
        self.pos = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="mbe-log-tail", daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        if data:
            self.pos += len(data)
            sys.stderr.write(self.decoder.decode(data))
            sys.stderr.flush()

    def _loop(self) -> None:
        while not self.stop_event.wait(0.2):
            self._copy()

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join()
        self._copy()
        rest = self.decoder.decode(b"", final=True)
        if rest:
            sys.stderr.write(rest)

    def text(self) -> str:
        return self.path.read_text(errors="replace") if self.path.exists() else ""


def _heartbeat() -> None:
    """Touch this process's stderr when it is a file (the rule's log; see POLL_S)."""
    try:
        if stat.S_ISREG(os.fstat(2).st_mode):
            os.utime(2)
    except (OSError, NotImplementedError):
        pass


def _base_row(*, dataset, run_id, engine, params, repeats, timeout_s, label, variant, timed,
              simulated, entry, command) -> dict[str, Any]:
    return {
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
        "setup_s": [],
        "startup_s": None,
        "algo_s_median": None,
        "compile_s": None,
        "peak_rss_bytes": None,
        "graph": None,
        "stats": {},
        # a simulator (numba's CUDA simulator) runs on the CPU: counts are real, times are not
        "simulated": bool(simulated),
    }


def run(*, params: dict[str, Any], **options: Any) -> dict[str, Any]:
    """Run the engine in a child process with ``params`` and return the result row (not
    written): :func:`run_items` with one item, whose ``options`` it takes (``dataset``,
    ``run_id``, ``engine``, ``graph``, ``repeats``, ``timeout_s``, ``env``, ``label``,
    ``variant``, ``timed``, ``simulated``, ``entry``, ``command``, ``input_path``).
    """
    rows: list[dict[str, Any]] = []
    not_final = run_items(items=[params], on_row=lambda _k, row: rows.append(row), **options)
    if not_final:
        raise not_final[0][1]
    return rows[0]


def run_items(
    *,
    dataset: str,
    run_id: str,
    engine: str,
    graph: str | os.PathLike,
    items: list[dict[str, Any]],
    on_row: Callable[[int, dict[str, Any]], None],
    progress_labels: list[str] | None = None,
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
) -> list[tuple[int, RunNotFinal]]:
    """Run the engine once per item (its params; e.g. the shards of a run) in one child
    process, one after the other, and hand each item's row to ``on_row(k, row)`` as soon
    as it is there.

    One process pays the start-up (interpreter, imports, graph, JIT cache) once for all
    items.  Each item has its own ``timeout_s`` (the first one's includes the start-up):
    an item past it is killed and is a ``timeout`` row, a crash is an ``error`` row, and
    the items after it go on in a new child.  An item killed from outside (the OOM
    killer) gets no row: it is returned with its :class:`RunNotFinal`, and the others go
    on.  A bad CSR file raises RunNotFinal at once (no item can run).
    """
    spec = {"engine": engine, "entry": entry, "command": command, "graph": str(graph),
            "input_path": str(input_path) if input_path else None, "repeats": repeats}
    base = dict(dataset=dataset, run_id=run_id, engine=engine, repeats=repeats,
                timeout_s=timeout_s, label=label, variant=variant, timed=timed,
                simulated=simulated, entry=entry, command=command)
    labels = progress_labels or [f"{dataset} {run_id}"] * len(items)
    # before any engine runs, so that none of it shares the machine with a timed run
    machine = environment()
    not_final: list[tuple[int, RunNotFinal]] = []
    pending = list(range(len(items)))
    with tempfile.TemporaryDirectory(prefix="mbe-run-") as tmp:
        err = Path(tmp) / "stderr.txt"
        tail = _LogTail(err)
        try:
            attempt = 0
            while pending:
                attempt += 1
                out = Path(tmp) / f"out{attempt}"
                out.mkdir()
                child = {**spec, "items": [{"params": items[k], "label": labels[k]}
                                           for k in pending]}
                done, fate = _child(child, out, err, timeout_s, env, pending, base, items,
                                    machine, on_row)
                rest = pending[done:]
                if fate is None:  # the child ran every item it was given
                    pending = []
                    continue
                kind, message = fate
                k = rest[0]
                if kind == "bad_input":
                    raise RunNotFinal(f"dataset {dataset!r}: {message}", bad_input=str(graph))
                if kind == "not_final":
                    not_final.append((k, RunNotFinal(message)))
                else:  # timeout or error: the item's row says so
                    row = _base_row(params=items[k], **base)
                    row.update(status=kind, message=message, env=machine, finished_at=_now())
                    on_row(k, row_schema.checked_or_error(row))
                pending = rest[1:]
        finally:
            tail.stop()
    return not_final


def _child(child: dict, out: Path, err: Path, timeout_s: float, env, pending: list[int],
           base: dict, items: list[dict], machine: dict, on_row) -> tuple[int, tuple | None]:
    """Start one child on ``child["items"]`` and follow it to its end: every finished item
    goes to ``on_row``.  Returns (items finished, None) when it ran them all, else the
    fate of the next one: ("timeout" | "error" | "not_final" | "bad_input", message)."""
    cmd = [sys.executable, "-m", "mbebench.runner", json.dumps(child), str(out)]
    child_env = {**os.environ, **(env or {})}
    n = len(child["items"])
    done = 0
    started_at = _now()
    with open(err, "ab") as errf:
        proc = subprocess.Popen(cmd, stdout=errf, stderr=errf, start_new_session=True,
                                env=child_env)
    clock = beat = time.monotonic()
    timed_out = False
    try:
        while True:
            try:
                proc.wait(timeout=POLL_S)
                exited = True
            except subprocess.TimeoutExpired:
                exited = False
            while done < n and (out / f"{done}.json").is_file():
                result = json.loads((out / f"{done}.json").read_text())
                k = pending[done]
                if result["status"] == "bad_input":
                    _kill_group(proc)
                    return done, ("bad_input", result["message"])
                row = _base_row(params=items[k], **base)
                row["started_at"] = started_at
                row.update(result)
                if row["algo_s"]:
                    row["algo_s_median"] = statistics.median(row["algo_s"])
                row.update(env=machine, finished_at=_now())
                on_row(k, row_schema.checked_or_error(row))
                done += 1
                started_at, clock = _now(), time.monotonic()
            if exited:
                break
            now = time.monotonic()
            if now - beat >= HEARTBEAT_S:
                _heartbeat()
                beat = now
            if now - clock > timeout_s:
                _kill_group(proc)
                timed_out = True
                break
    except BaseException:
        _kill_group(proc)
        raise
    # workers the engine failed to reap must not outlive the run
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if done == n:
        return done, None
    if timed_out:
        return done, ("timeout", f"timed out after {timeout_s:g} s")
    killed_by = -proc.returncode if proc.returncode and proc.returncode < 0 else None
    if killed_by in OUTSIDE_SIGNALS:
        name = signal.Signals(killed_by).name
        what = f"dataset {base['dataset']!r} run {base['run_id']}"
        shard = items[pending[done]].get("shard")
        if shard and shard != "0/1":
            what += f" shard {shard}"
        return done, ("not_final",
                      f"{what}: the engine process was killed by {name} from outside (the OS"
                      " out of memory, or an admin); not recorded, the next run retries it")
    log = err.read_text(errors="replace")
    last = next((ln for ln in reversed(log.splitlines()) if ln.strip()), "")
    return done, ("error", f"engine process exited with code {proc.returncode}"
                  + (f": {last.strip()}" if last else ""))


def unavailable_row(*, dataset: str, run_id: str, engine: str, params: dict[str, Any],
                    reason: str, label: str | None = None, variant: str | None = None,
                    timed: bool = True, repeats: int = 1, timeout_s: float = 3600.0,
                    simulated: bool = False, entry: str | None = None,
                    command: list[str] | None = None) -> dict[str, Any]:
    """The row of a run that could not start because its dataset is unavailable (its
    download or convert failed; ``reason`` says why).  Nothing is run."""
    row = _base_row(dataset=dataset, run_id=run_id, engine=engine, params=params,
                    repeats=repeats, timeout_s=timeout_s, label=label, variant=variant,
                    timed=timed, simulated=simulated, entry=entry, command=command)
    row.update(env=environment(), status="unavailable", message=one_line(reason),
               finished_at=row["started_at"])
    return row_schema.check(row, f"dataset {dataset!r} run {run_id}")


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


def moved_aside(e: RunNotFinal) -> RunNotFinal:
    """``e`` with its bad input moved aside (:func:`quarantine`) and said so: what the
    ``run`` command fails with."""
    moved = quarantine(e.bad_input) if e.bad_input else None
    return RunNotFinal(f"{e}" + (f"; moved it to {moved}: the next run converts the dataset "
                                 "again" if moved else "") + " (no row written: not a result)")


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


def _process_age_s() -> float | None:
    """Seconds since this process started (Linux: /proc; else None)."""
    try:
        with open("/proc/self/stat") as f:
            started = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return round(max(0.0, uptime - started / os.sysconf("SC_CLK_TCK")), 3)
    except (OSError, ValueError, IndexError):
        return None


def _child_entry(argv: list[str]) -> int:
    """``python -m mbebench.runner <spec> <out dir>``: the runner's child.  Runs the
    spec's items in order, writing ``<k>.json`` for item k as soon as it is done."""
    _die_with_parent()
    from mbebench.csr import CSRError
    from mbebench.progress import LABEL_ENV

    spec = json.loads(argv[0])
    out = Path(argv[1])
    failure = None
    try:
        graph, once = _load(spec)
        startup = _process_age_s()  # interpreter, imports and the graph, before any item
    except CSRError as e:  # the input, not the engine: not a result (see RunNotFinal)
        atomic.write_json(out / "0.json",
                          {"status": "bad_input", "message": str(e).splitlines()[0]})
        return 0
    except Exception as e:  # e.g. an engine that cannot be imported: every item fails
        traceback.print_exc()
        graph, once = None, None
        failure = {"status": "error", "message": typed_error_line(e)}
    for k, item in enumerate(spec["items"]):
        os.environ[LABEL_ENV] = item.get("label") or ""
        result = failure or _run_item(graph, once, item["params"], spec["repeats"],
                                      spec.get("engine") or "run")
        if k == 0 and not failure:
            result["startup_s"] = startup
        atomic.write_json(out / f"{k}.json", result)
    return 0


if __name__ == "__main__":
    sys.exit(_child_entry(sys.argv[1:]))
