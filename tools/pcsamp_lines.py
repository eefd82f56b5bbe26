"""Where a PC-sampled kernel's samples fall, by source line and by function, from Nsight
Compute's source page (docs/gpu-performance.md, "A dense-core grade"):

    ncu --import prof.ncu-rep --page source --csv --print-source cuda,sass > lines.csv
    python tools/pcsamp_lines.py lines.csv [--top 30] [--source-root .]

The page lists each source file, its lines with their samples, and under each line the SASS
instructions that line info gives it: the innermost line, so an instruction of an inlined
helper (``arena.py``'s ``ld``, ``sync.py``'s barrier) counts to the helper, not to its caller.
``--helpers`` names such files: their samples are also given to the caller, taken as the line
of the nearest instruction before them (by address) in another file, which is where the
compiler inlined them in all but a few places.  Functions are found by the ``def`` lines of
the source files (``--source-root``: where the paths of the page lie, relative to their
``cumbe/`` part), so a line counts to the innermost ``def`` above it.  ``--context F,G``
counts every instruction to the last of those functions met before it by address (its own
included; helpers and the same file's other functions inlined there count to it), which
splits an inlined device function by where it was inlined."""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import Counter
from pathlib import Path


def read(path: str) -> tuple[dict, list]:
    """(samples of each (file, line), [(address, file, line, samples)] of the instructions)."""
    lines, ins, f, cur = {}, [], None, None
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
                if n.isdigit():
                    lines[cur] = lines.get(cur, 0) + int(n)
            elif cur and r[2].startswith("0x") and n.isdigit():
                ins.append((int(r[2], 16), cur[0], cur[1], int(n)))
    return lines, sorted(ins)


def functions(path: str, root: Path) -> list[tuple[int, str]]:
    """(line, name) of each ``def`` in the source file the page names ``path``."""
    parts = Path(path).parts
    rel = Path(*parts[parts.index("cumbe"):]) if "cumbe" in parts else Path(path)
    src = root / rel
    if not src.exists():
        return []
    return [(i, m.group(1)) for i, t in enumerate(src.read_text().splitlines(), 1)
            if (m := re.match(r"\s*def (\w+)", t))]


def summary(path: str, top: int = 30, helpers=("arena.py", "sync.py"), root=Path("."),
            context=()) -> str:
    lines, ins = read(path)
    total = sum(lines.values()) or 1
    short = {f: Path(f).name for f, _ in lines}
    defs = {f: functions(f, root) for f in short}

    def func(f, ln):
        name = "?"
        for i, nm in defs.get(f, []):
            if i <= ln:
                name = nm
        return f"{short[f]}:{name}"

    pct = lambda n: f"{100 * n / total:5.1f} %"
    out = [f"{total} samples"]
    by_file, by_func, callers = Counter(), Counter(), Counter()
    for (f, ln), n in lines.items():
        by_file[short[f]] += n
        by_func[func(f, ln)] += n
    prev = None
    for _, f, ln, n in ins:
        if short.get(f, Path(f).name) in helpers:
            if prev:
                callers[(short[f], f"{short[prev[0]]}:{prev[1]}", func(*prev))] += n
        else:
            prev = (f, ln)
    if context:
        ctx, by_ctx = None, Counter()
        for _, f, ln, n in ins:
            fn = func(f, ln)
            if fn.split(":")[1] in context:
                ctx = fn
            elif short[f] not in helpers and ctx and not fn.startswith(ctx.split(":")[0] + ":"):
                ctx = None
            by_ctx[ctx or "(elsewhere)"] += n
        out += ["", "by context (--context):"] + [f"{pct(n)}  {k}" for k, n in
                                                  by_ctx.most_common()]
    out += ["", "by file:"] + [f"{pct(n)}  {k}" for k, n in by_file.most_common()]
    out += ["", "by function (innermost):"] + [f"{pct(n)}  {k}" for k, n in
                                                by_func.most_common(top)]
    out += ["", f"by line (innermost), the {top} largest:"]
    src = {}
    for (f, ln), n in sorted(lines.items(), key=lambda x: -x[1])[:top]:
        if f not in src:
            p = root / Path(*Path(f).parts[Path(f).parts.index("cumbe"):]) \
                if "cumbe" in Path(f).parts else Path(f)
            src[f] = p.read_text().splitlines() if p.exists() else []
        text = src[f][ln - 1].strip()[:70] if ln <= len(src[f]) else ""
        out.append(f"{pct(n)}  {short[f]}:{ln}  {text}")
    out += ["", "helpers' samples by the caller line before them:"]
    out += [f"{pct(n)}  {h} after {c} ({fn})" for (h, c, fn), n in callers.most_common(top)]
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
