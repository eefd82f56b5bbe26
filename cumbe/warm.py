"""Compile cuMBE kernel builds into numba's on-disk cache, several at once (one process each).

    python -m cumbe.warm --jobs 8 cuMBE:128 noRS:128 noES:128 noWS:128 cuMBE-instr:128

A build is ``variant[-instr][-pieces][-compact]:threads[:blocks_per_sm]`` (the switches of
:class:`cumbe.consts.Build`, and the launch bound when not the default).  A cold compile of
one takes ~30-60 s of one CPU core and numba compiles in the calling process only, so a run
(or the GPU oracle, which meets up to 28 builds) that compiles them one after another waits
minutes; compiled here in parallel, each is loaded from the cache afterwards (the same
NUMBA_CACHE_DIR for both).  Prints one JSON line per build with its compile seconds, registers
per thread and local (spill) memory; exit status 1 if one failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLAGS = ("instr", "pieces", "compact", "rounds", "hubs")


def parse(spec: str) -> tuple[str, dict]:
    """``variant[-flag...]:threads[:blocks_per_sm]`` -> (variant, the build's switches but the
    variant's)."""
    name, _, rest = spec.partition(":")
    threads, _, per_sm = rest.partition(":")
    variant, *flags = name.split("-")
    unknown = set(flags) - set(FLAGS)
    if not threads.isdigit() or (per_sm and not per_sm.isdigit()) or unknown:
        raise ValueError(f"not a build: {spec!r} "
                         "(variant[-instr][-pieces][-compact][-rounds[-hubs]]:threads"
                         "[:blocks_per_sm])")
    out = {"instr": "instr" in flags, "pieces": "pieces" in flags,
           "compact": "compact" in flags, "threads": int(threads)}
    if "rounds" in flags:  # (absent otherwise: the paper's check, the default build's key)
        out["rounds"] = True
        if "hubs" in flags:
            out["hubs"] = True
    if per_sm and int(per_sm):
        out["blocks_per_sm"] = int(per_sm)
    return variant, out


def spec(variant: str, threads: int, instr=False, pieces=False, compact=False,
         blocks_per_sm=0, rounds=False, hubs=False) -> str:
    """The name of a build (the inverse of :func:`parse`)."""
    flags = [f for f, on in zip(FLAGS, (instr, pieces, compact, rounds, hubs and rounds)) if on]
    return "-".join([variant, *flags]) + f":{threads}" + (
        f":{blocks_per_sm}" if blocks_per_sm else "")


def every_build(variants, threads: int, blocks_per_sm: int = 0) -> list[str]:
    """Every build a run of ``variants`` at ``threads`` may launch: instrumented or not,
    compact layout or not, and tasks in pieces and the check in rounds (hub rows or not) for
    the reverse-scanning variants (noRS keeps tasks whole and scans its Q)."""
    from cumbe.variants import ABLATIONS

    out = []
    for v in variants:
        for instr in (False, True):
            for compact in (False, True):
                for pieces in ((False, True) if ABLATIONS[v][0] else (False,)):
                    # the check in rounds, with hub rows or without
                    for rounds, hubs in (((False, False), (True, False), (True, True))
                                         if ABLATIONS[v][0] else ((False, False),)):
                        out.append(spec(v, threads, instr, pieces, compact, blocks_per_sm,
                                        rounds, hubs))
    return out


def compile_one(build: str) -> dict:
    from numba import cuda

    from cumbe import buffers, kernel
    from cumbe.variants import ABLATIONS

    variant, switches = parse(build)
    rs, es, ws = ABLATIONS[variant]
    kern = kernel.build(rs=rs, es=es, ws=ws, **switches)
    sig = tuple(kern.typeof_pyval(x) for x in buffers.typing_dummies(cuda))
    t = time.perf_counter()
    ov = kern.compile(sig)
    threads = switches["threads"]
    out = {"build": build, "compile_s": round(time.perf_counter() - t, 1),
           "max_cooperative_blocks": int(ov.max_cooperative_grid_blocks(threads))}
    # the compiled kernel's own figures (the dispatcher's get_* need the signature form
    # numba keys its overloads by, which the typed dummies are not)
    for key, attr in (("regs", "regs_per_thread"), ("local_bytes", "local_mem_per_thread"),
                      ("shared_bytes", "shared_mem_per_block")):
        try:
            out[key] = int(getattr(ov, attr))
        except Exception as e:  # noqa: BLE001 - informational only
            out[key] = f"{type(e).__name__}"
    return out


def warm(builds, jobs: int, emit=print) -> bool:
    """Compile ``builds`` in up to ``jobs`` processes at once; ``emit`` gets each one's JSON
    line as it ends.  True if all compiled."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    running, ok = [], True
    pending = list(builds)
    while pending or running:
        while pending and len(running) < max(1, jobs):
            running.append(subprocess.Popen(
                [sys.executable, "-m", "cumbe.warm", "--one", pending.pop(0)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
        p = running.pop(0)
        out, err = p.communicate()
        if p.returncode:
            ok = False
            emit(json.dumps({"build": p.args[-1], "error": err[-2000:]}))
        else:
            emit(out.strip().splitlines()[-1])
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+",
                    help="variant[-instr][-pieces][-compact]:threads[:blocks_per_sm]")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    for b in a.builds:
        try:
            parse(b)
        except ValueError as e:
            ap.error(str(e))
    if a.one:
        print(json.dumps(compile_one(a.builds[0])), flush=True)
        return 0
    return 0 if warm(a.builds, a.jobs, lambda line: print(line, flush=True)) else 1


if __name__ == "__main__":
    sys.exit(main())
