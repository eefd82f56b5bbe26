"""Deliberate breaks the test suite is known to catch, replayed (docs/reliability.md).

    python tools/mutate.py              # every break: caught or NOT CAUGHT, and how fast
    python tools/mutate.py --list
    python tools/mutate.py --only cumbe-maximality,tables-fingerprint
    python tools/mutate.py --only cumbe-maximality --command "python -m cumbe.selfcheck ..."

The breaks are listed in tools/mutations.toml.  Each is one text replacement in one file
of a temporary copy of the working tree (tracked and untracked files, nothing ignored: no
numba cache comes along), then the tests named for it run in that copy.  Caught: pytest exits with status 1 (a test
failed); any other status (collection error, no test ran) counts as not caught.  The
exit status is the number of breaks not caught.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Break:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    why: str
    within_s: float = 0.0  # caught within this many seconds, or it counts as not caught


def load_breaks(path: Path = REPO / "tools" / "mutations.toml") -> tuple[Break, ...]:
    """The catalogue of breaks (a data file: one ``[[break]]`` table each)."""
    with open(path, "rb") as f:
        rows = tomllib.load(f)["break"]
    return tuple(Break(**{**r, "tests": tuple(r["tests"])}) for r in rows)


BREAKS = load_breaks()


def _copy(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    for f in filter(None, files):
        src = REPO / os.fsdecode(f)
        if src.is_file():
            (dest / os.fsdecode(f)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / os.fsdecode(f))


def apply(b: Break, root: Path) -> None:
    path = root / b.path
    text = path.read_text()
    if text.count(b.old) != 1:
        raise SystemExit(f"{b.name}: {b.path} holds {text.count(b.old)} copies of {b.old!r}, "
                         "not one: update the break")
    path.write_text(text.replace(b.old, b.new))


def replay(b: Break, command: list[str] | None, keep: bool) -> tuple[bool, float, str]:
    tmp = Path(tempfile.mkdtemp(prefix=f"mutate-{b.name}-"))
    try:
        _copy(tmp)
        apply(b, tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
        env["PYTHONPATH"] = str(tmp) + os.pathsep + env.get("PYTHONPATH", "")
        cmd = command or [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
                          *b.tests]
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - t0
        out = p.stdout + p.stderr
        failed = [ln for ln in out.splitlines()
                  if ln.startswith(("FAILED", "ERROR", "COUNTEREXAMPLE"))]
        caught = p.returncode == 1 if command is None else p.returncode != 0
        if caught and b.within_s and seconds > b.within_s:
            caught = False
            failed.insert(0, f"caught after {seconds:.0f} s, over {b.within_s:.0f} s")
        return caught, seconds, (failed[0] if failed else out.strip()[-300:])[:300]
    finally:
        if keep:
            print(f"  copy kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python tools/mutate.py")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--only", default="", help="comma list of break names")
    ap.add_argument("--command", default="", help="run this instead of the break's tests")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n]
    unknown = set(names) - {b.name for b in BREAKS}
    if unknown:
        ap.error(f"unknown break(s): {', '.join(sorted(unknown))}")
    chosen = [b for b in BREAKS if not names or b.name in names]
    if a.list:
        for b in chosen:
            print(f"{b.name}: {b.path}: {b.why}\n    tests: {' '.join(b.tests)}")
        return 0
    missed = 0
    for b in chosen:
        caught, seconds, line = replay(b, a.command.split() or None, a.keep)
        missed += not caught
        print(f"{'caught' if caught else 'NOT CAUGHT':10} {seconds:6.0f} s  {b.name}: {line}",
              flush=True)
    print(f"{len(chosen) - missed} of {len(chosen)} breaks caught")
    return missed


if __name__ == "__main__":
    sys.exit(main())
