"""Where a PC-sampled kernel's samples fall, by source line and by function, from Nsight
Compute's source page (docs/gpu-performance.md, "A dense-core grade"):

    ncu --import prof.ncu-rep --page source --csv --print-source cuda,sass > lines.csv
    python tools/pcsamp_lines.py lines.csv [--top 30] [--source-root .]

The page lists each source file, its lines, and under each line the SASS instructions that
line info gives it: an inlined helper's instruction (``arena.py``'s ``ld``, ``sync.py``'s
barrier) under the helper's line, and some also under the line of the call.  Every total here
counts an instruction once (by file, function and line, once under each it is listed under).
``--helpers`` names such files: their samples are given to the caller too, the line the page
lists them with, else the line of the nearest instruction before them (by address) in
another file, which is where the compiler inlined them in all but a few places.  Functions
are found by the ``def`` lines of the source files (``--source-root``: where the paths of the
page lie, relative to their ``cumbe/`` part), so a line counts to the innermost ``def`` above
it.  ``--context F,G`` counts every instruction to the last of those functions met before it
by address (its own included; helpers and the same file's other functions inlined there
count to it), which splits an inlined device function by where it was inlined."""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path


def read(path: str) -> dict:
    """{address: (samples, [(file, line), ...])}: each instruction once, with every line the
    page lists it under (an inlined helper's instruction comes under the helper's line and,
    for some, under the line of its call as well)."""
    at, f, cur = {}, None, None
    with open(path, newline="") as fh:
        for r in csv.reader(fh):
            if not r or r[0] in ("Function Name", "Line No"):
                continue
            if r[0] in ("File Path", "File Name"):
                f = r[1]
                continue
            if len(r) < 4:
                continue
            n = r[-1]
            if r[0]:
                cur = (f, int(r[0]))
            elif cur and r[2].startswith("0x") and n.isdigit():
                a = int(r[2], 16)
                at.setdefault(a, (int(n), []))[1].append(cur)
    return dict(sorted(at.items()))


def functions(src: list[str]) -> list[tuple[int, str]]:
    """(line, name) of each ``def`` in a source file's lines."""
    return [(i, m.group(1)) for i, t in enumerate(src, 1) if (m := re.match(r"\s*def (\w+)", t))]


def _source(path: str, root: Path) -> list[str]:
    parts = Path(path).parts
    p = root / Path(*parts[parts.index("cumbe"):]) if "cumbe" in parts else Path(path)
    return p.read_text().splitlines() if p.exists() else []


def summary(path: str, top: int = 30, helpers=("arena.py", "sync.py"), root=Path("."),
            context=()) -> str:
    at = read(path)
    total = sum(n for n, _ in at.values()) or 1
    files = {f for _, where in at.values() for f, _ in where}
    short = {f: Path(f).name for f in files}
    src = {f: _source(f, root) for f in files}
    defs = {f: functions(src[f]) for f in files}

    def func(f, ln):
        name = "?"
        for i, nm in defs.get(f, []):
            if i <= ln:
                name = nm
        return f"{short[f]}:{name}"

    def pct(n):
        return f"{100 * n / total:5.1f} %"

    out = [(f"{total} samples (each instruction once; by file, function and line an "
            "instruction counts to every one the page lists it under)")]
    by_file, by_func, by_line, callers = Counter(), Counter(), Counter(), Counter()
    prev = None
    for n, where in at.values():
        for k in {short[f] for f, _ in where}:
            by_file[k] += n
        for k in {func(f, ln) for f, ln in where}:
            by_func[k] += n
        for k in set(where):
            by_line[k] += n
        mine = [(f, ln) for f, ln in where if short[f] not in helpers]
        for f, ln in where:
            if short[f] in helpers:
                c = mine[0] if mine else prev
                if c:
                    how = "with" if mine else "after"
                    callers[(short[f], how, f"{short[c[0]]}:{c[1]}", func(*c))] += n
                break
        if mine:
            prev = mine[0]
    if context:
        ctx, by_ctx = None, Counter()
        for n, where in at.values():
            fns = [func(f, ln) for f, ln in where]
            hit = [fn for fn in fns if fn.split(":")[1] in context]
            if hit:
                ctx = hit[0]
            elif ctx and not all(short[f] in helpers for f, _ in where) and not any(
                    fn.startswith(ctx.split(":")[0] + ":") for fn in fns):
                ctx = None
            by_ctx[ctx or "(elsewhere)"] += n
        out += ["", "by context (--context; each instruction once):"] + [
            f"{pct(n)}  {k}" for k, n in by_ctx.most_common()]
    out += ["", "by file:"] + [f"{pct(n)}  {k}" for k, n in by_file.most_common()]
    out += ["", "by function:"] + [f"{pct(n)}  {k}" for k, n in by_func.most_common(top)]
    out += ["", f"by line, the {top} largest:"]
    for (f, ln), n in by_line.most_common(top):
        text = src[f][ln - 1].strip()[:70] if ln <= len(src[f]) else ""
        out.append(f"{pct(n)}  {short[f]}:{ln}  {text}")
    out += ["", ("helpers' samples by their caller (the line the page lists them with, else "
                 "the line before them by address):")]
    out += [f"{pct(n)}  {h} {how} {c} ({fn})" for (h, how, c, fn), n in
            callers.most_common(top)]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="ncu --page source --csv --print-source cuda,sass output")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--helpers", default="arena.py,sync.py")
    ap.add_argument("--source-root", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--context", default="", help="comma list of function names")
    a = ap.parse_args(argv)
    try:
        sys.stdout.write(summary(a.csv, a.top, tuple(a.helpers.split(",")),
                                 Path(a.source_root), tuple(filter(None, a.context.split(",")))))
    except (OSError, ValueError, IndexError) as e:
        raise SystemExit(f"tools/pcsamp_lines.py: {a.csv}: not a source page: {e}") from None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
