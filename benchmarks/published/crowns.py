"""Crown graphs and unions of them as KONECT edge lists, for the published codes' GPU run.

    python benchmarks/published/crowns.py OUT_DIR [16 21 18x8200 ...]

``n`` writes S_n (K_{n,n} without a perfect matching: 2^n - 2 maximal bicliques) as
``OUT_DIR/out.crown-n``; ``nxc`` writes c disjoint copies of S_n (c * (2^n - 2)) as
``OUT_DIR/out.crown-nxc``.  A union of many small crowns passes 2^31 bicliques with every
first-level task small, so that GMBE, which runs each first-level task on one SM, finishes it
in seconds where one crown S_32 takes it hours: its 32-bit count then shows.  Each file's
expected count is printed (and written to ``OUT_DIR/crowns.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import standins  # noqa: E402
from mbebench import export  # noqa: E402


def write(out: Path, spec: str) -> tuple[str, int]:
    n, _, c = spec.partition("x")
    n, copies = int(n), int(c or 1)
    name = f"crown-{spec}"
    export.write(standins.crown_union(n, copies), "konect", out / f"out.{name}")
    return name, copies * standins.crown_bicliques(n)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("specs", nargs="*", default=["16", "21", "18x8200"])
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    counts = dict(write(a.out, s) for s in a.specs)
    for name, c in counts.items():
        print(f"{name}\t{c}\t{'past 2^31-1' if c > 2**31 - 1 else ''}")
    (a.out / "crowns.json").write_text(json.dumps(counts, indent=1) + "\n")


if __name__ == "__main__":
    main()
