"""Deliberate breaks the test suite is known to catch, replayed (docs/reliability.md).

    python tools/mutate.py              # every break: caught or NOT CAUGHT, and how fast
    python tools/mutate.py --list
    python tools/mutate.py --only cumbe-maximality,tables-fingerprint
    python tools/mutate.py --only cumbe-maximality --command "python -m cumbe.selfcheck ..."

Each break is one text replacement in one file of a temporary copy of the working tree
(tracked and untracked files, nothing ignored: no numba cache comes along), then the
tests named for it run in that copy.  Caught: pytest exits with status 1 (a test
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


# the agreement check with its fingerprint condition removed (tables and pipeline breaks)
_COUNTS_ONLY = (
    "return len({c for c, _ in g}) == 1 and len({f for _, f in g if f is not None}) <= 1",
    "return len({c for c, _ in g}) == 1",
)

BREAKS = (
    Break("tables-fingerprint", "mbebench/report/agreement.py",
          *_COUNTS_ONLY,
          ("tests/test_tables.py",),
          "the final agreement check compares counts only"),
    Break("pipeline-fingerprint", "mbebench/report/agreement.py",
          *_COUNTS_ONLY,
          ("tests/test_pipeline_plugins.py", "-k", "mismatch"),
          "the same, through the whole Snakemake pipeline (a plug-in with the right count "
          "and other bicliques)"),
    Break("runner-repeats-fingerprint", "mbebench/runner.py",
          "counts = {(r.count, r.fingerprint) for r in results}",
          "counts = {(r.count, None) for r in results}",
          ("tests/test_runner.py", "-k", "failures_become"),
          "the runner's check that repeats agree compares counts only"),
    Break("fingerprint-constant", "mbebench/fingerprint.py",
          "_K = 0x9E3779B97F4A7C15", "_K = 0x9E3779B97F4A7C17",
          ("tests/test_pinned.py", "-k", "oracle"),
          "another fingerprint definition, in the Python and the compiled versions alike"),
    Break("fingerprint-right-elem", "mbebench/fingerprint.py",
          "return mix(np.uint64(v) * U2 + U2)", "return mix(np.uint64(v) * U2 + U1)",
          ("tests/test_fingerprint.py", "tests/test_pinned.py", "-k", "imbea or compiled"),
          "the compiled right-side element hash differs from the reference"),
    Break("stale-numba-cache", "mbebench/jitcache.py",
          "    cache._index_key = _index_key\n", "",
          ("tests/test_jitcache.py",),
          "numba's disk cache keyed as numba does it: an edit to a compiled-in helper is "
          "served the old machine code"),
    Break("imbea-maximality", "baselines/_imbea_kernel.py",
          "            for i in range(qs, qe):", "            for i in range(qs + 1, qe):",
          ("tests/test_pinned.py", "-k", "imbea"),
          "iMBEA's maximality check skips the first processed vertex of Q"),
    Break("download-checksum", "mbebench/download.py",
          "if want and digest != want:", "if False and want and digest != want:",
          ("tests/test_download.py", "-k", "checksum"),
          "a download with the wrong SHA-256 is kept"),
    Break("atomic-cleanup", "mbebench/atomic.py",
          "        tmp.unlink(missing_ok=True)\n        raise", "        raise",
          ("tests/test_atomic.py",),
          "a failed atomic write leaves its temporary file behind"),
    Break("runner-orphan", "mbebench/runner.py",
          "        pr_set_pdeathsig = 1\n", "        pr_set_pdeathsig = 0\n",
          ("tests/test_runner.py", "-k", "child_dies"),
          "an engine process outlives its killed runner (checked by its pid, not by ps)"),
    Break("cumbe-memory-check", "cumbe/launch.py",
          "    if need > free:", "    if need > free + 1:",
          ("tests/test_cumbe_faults.py", "-k", "memory_check"),
          "cuMBE launches when it needs one byte more than is free"),
    Break("ci-skips-pass", "tests/conftest.py",
          "    if needed:\n", "    if False:\n",
          ("tests/test_ci_require.py",),
          "in CI a skipped mirror, SLURM or LaTeX test passes as green"),
    Break("cumbe-pieces-thief", "cumbe/kernel/stealing.py",
          "            if sh[g, S_R0] % vpn != ph[pprev, w, H_PK]:",
          "            if False and sh[g, S_R0] % vpn != ph[pprev, w, H_PK]:",
          ("tests/test_cumbe_paths.py", "-k", "pieces"),
          "a thief of a piece's level-0 candidate runs it whatever the piece's rule says"),
    Break("cumbe-maximality", "cumbe/kernel/maximality.py",
          "if gl == 0 and m > target:", "if gl == 0 and m > target + 1:",
          ("tests/test_cumbe_sim.py", "-k", "matches_oracle"),
          "cuMBE's maximality check lets non-maximal bicliques through", 60.0),
    Break("cumbe-selection", "cumbe/kernel/search.py",
          "            if i < pc:", "            if i <= pc:",
          ("tests/test_cumbe_sim.py", "-k", "matches_oracle"),
          "cuMBE's candidate selection reads one place past the live candidates", 60.0),
    Break("cumbe-steal-piece", "cumbe/kernel/stealing.py",
          "sh[g, S_IDX] = jx - 1", "sh[g, S_IDX] = jx",
          ("tests/test_cumbe_sim.py", "-k", "matches_oracle"),
          "a thief takes the wrong published piece (one twice, one never)", 60.0),
    Break("cumbe-noRS-stolen-branch", "cumbe/kernel/stealing.py",
          "                nq += 1\n", "                nq += 0\n",
          ("tests/test_cumbe_sim.py", "-k", "matches_oracle"),
          "noRS thieves forget the victim's current branch (the H100 bug of 2026-11-23)",
          60.0),
    Break("cumbe-block-steal-off", "cumbe/kernel/stages.py",
          "            nstp = nst\n", "            nstp = 1 if phase == 0 else nst\n",
          ("tests/test_cumbe_paths.py",),
          "block-wide tasks no longer steal from each other (the path memory caps rely on)",
          120.0),
    Break("cumbe-progress-stolen-task", "cumbe/kernel/stages.py",
          "own = sh[g, S_GOT] != 0  # a first-level task of its own, not a stolen piece",
          "own = True",
          ("tests/test_cumbe_paths.py", "-k", "progress"),
          "a thief counts the first-level task of its stolen piece again: the progress "
          "counters end past the task count", 180.0),
    Break("cumbe-block-barrier-unfenced", "cumbe/kernel/sync.py",
          "    if not SIM:\n        cuda.threadfence_block()\n    bsync()\n",
          "    bsync()\n",
          ("tests/test_cumbe_paths.py", "-k", "fences"),
          "the block barrier without its CTA fences (the H100 block-wide fault of 2026-11-25)"),
)


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
