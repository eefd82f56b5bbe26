"""Command-line engines: any program that reads a graph file and prints its count and time.

The protocol (README, "Bring your own engine"):

* the program gets its arguments from the config's ``command`` (a list, or a
  string split like a shell would), where ``{graph}`` is the graph file,
  ``{python}`` this Python interpreter, ``{n_left}``, ``{n_right}``,
  ``{n_edges}`` the graph's sizes, and ``{<param>}`` each of the engine's
  ``params``;
* the graph file is the binary CSR (``input: csr``, :mod:`mbebench.csr`), a
  KONECT edge list (``input: konect``) or an adjacency list (``input: adj``),
  see :mod:`mbebench.export`;
* on success it exits with status 0 and prints, on stdout, one line
  ``count: <number of maximal bicliques>`` and one line ``time_s: <seconds>``
  (its own enumeration time, no file reading); optionally
  ``fingerprint: 0x<16 hex digits>`` (:mod:`mbebench.fingerprint`) and
  ``compile_s: <seconds>``.  Other output is copied to the run's log.  When a
  key is printed more than once, the last line counts.

The runner runs it ``repeats`` times under the run's timeout, like any engine.
"""

from __future__ import annotations

import string
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from mbebench.engine import EngineResult

REQUIRED_KEYS = ("count", "time_s")
OPTIONAL_KEYS = ("fingerprint", "compile_s")
GRAPH_FIELDS = ("graph", "python", "n_left", "n_right", "n_edges")


class CommandError(RuntimeError):
    """The program failed or did not print what the protocol asks for."""


def placeholders(argv: Sequence[str]) -> list[str]:
    """The ``{name}`` fields of a command line (``{{`` is a literal brace)."""
    names = []
    for arg in argv:
        for _, name, spec, conv in string.Formatter().parse(arg):
            if name is not None:
                if spec or conv or not name.isidentifier():
                    raise ValueError(f"placeholder {{{name}}} in {arg!r}: use plain {{name}}")
                names.append(name)
    return names


def format_argv(argv: Sequence[str], values: Mapping[str, Any]) -> list[str]:
    return [arg.format_map({k: _text(v) for k, v in values.items()}) for arg in argv]


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def parse_output(stdout: str) -> dict[str, Any]:
    """The protocol's keys from a program's stdout; CommandError if count or time is missing."""
    found: dict[str, str] = {}
    lines: dict[str, str] = {}  # the line each key came from, for the error message
    for line in stdout.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key in REQUIRED_KEYS + OPTIONAL_KEYS:
            found[key] = value.strip()
            lines[key] = line.strip()
    missing = [k for k in REQUIRED_KEYS if k not in found]
    if missing:
        raise CommandError(
            "printed no " + " and no ".join(f"'{k}: ...' line" for k in missing)
            + " on stdout (see the log for its output)"
        )
    out: dict[str, Any] = {}
    for key, read in (("count", int), ("time_s", float), ("compile_s", float),
                      ("fingerprint", _fingerprint)):
        if key in found:
            try:
                out[key] = read(found[key])
            except ValueError as e:
                line = lines[key] if len(lines[key]) <= 80 else lines[key][:77] + "..."
                raise CommandError(f"unreadable output line {line!r}: {e}") from None
    if out["count"] < 0 or not out["time_s"] >= 0:
        raise CommandError(f"count {out['count']} and time_s {out['time_s']} must be >= 0")
    if not 0 <= out.get("fingerprint", 0) < 1 << 64:
        raise CommandError("fingerprint does not fit 64 bits")
    return out


def _fingerprint(text: str) -> int:
    if not text.lower().startswith("0x"):
        raise ValueError(f"fingerprint {text!r} is not 0x<hex>")
    return int(text, 16)


def run(argv: Sequence[str], graph_file: str, graph, params: Mapping[str, Any]) -> EngineResult:
    """Run the program once on ``graph_file`` (``graph``: the CSR, for the sizes)."""
    values = {**params, "graph": graph_file, "python": sys.executable,
              "n_left": graph.n_left, "n_right": graph.n_right, "n_edges": graph.n_edges}
    args = format_argv(argv, values)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(args, capture_output=True, text=True, errors="replace")
    except OSError as e:
        raise CommandError(f"cannot run {args[0]!r}: {e}") from None
    wall = time.perf_counter() - t0
    # the run's log keeps everything the program said
    sys.stderr.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        last = next((ln.strip() for ln in reversed(proc.stderr.splitlines()) if ln.strip()), "")
        raise CommandError(f"{args[0]} exited with code {proc.returncode}"
                           + (f": {last}" if last else ""))
    out = parse_output(proc.stdout)
    return EngineResult(
        count=out["count"],
        fingerprint=out.get("fingerprint"),
        algo_seconds=out["time_s"],
        compile_seconds=out.get("compile_s", 0.0),
        stats={"process_wall_s": wall},
    )
