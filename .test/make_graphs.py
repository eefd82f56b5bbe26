"""Write the tiny KONECT-format graphs shipped for CI and the README's first command.

Run from the repo root: ``python .test/make_graphs.py``.  Deterministic: the
archives it writes are committed, and tests/test_smoke_data.py checks that they
still match this script's output.  Each graph exercises a KONECT quirk seen in
real downloads (header variants, weights and timestamps, multi-edges, a shared
id space for the two sides, tabs and trailing spaces, an ``out.*`` name that
differs from the archive name).
"""

from __future__ import annotations

import io
import random
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def paper_fig1() -> str:
    # The figure is not in our copy of the paper; this graph satisfies its text:
    # U = {A..E} (1..5), V = {F..K} (1..6), ({A,B,C}, {F,G,H}) is a maximal
    # biclique and ({A,B}, {F,G,H}) is not.
    adj = {1: [1, 2, 3, 4], 2: [1, 2, 3], 3: [1, 2, 3, 5], 4: [3, 4, 5, 6], 5: [5, 6]}
    lines = ["% bip unweighted", f"% {sum(map(len, adj.values()))} 5 6"]
    lines += [f"{u} {v}" for u, vs in adj.items() for v in vs]
    return "\n".join(lines) + "\n"


def crown(n: int) -> str:
    # K_{n,n} minus a perfect matching has exactly 2**n - 2 maximal bicliques.
    lines = ["% bip unweighted"]
    lines += [f"{u}\t{v}" for u in range(1, n + 1) for v in range(1, n + 1) if u != v]
    return "\n".join(lines) + "\n"


def complete_multi(m: int, n: int) -> str:
    # Every edge twice, with weight and timestamp columns (ratings-style).
    lines = ["% bip positive", f"% {2 * m * n} {m} {n}"]
    ts = 1_000_000_000
    for rep in range(2):
        for u in range(1, m + 1):
            for v in range(1, n + 1):
                ts += 17
                lines.append(f"{u} {v} 1 {ts}")
    return "\n".join(lines) + "\n"


def hubs() -> str:
    # Two hubs adjacent to most of the right side plus sparse leaves: the shape
    # that stalls a naive per-vertex split (ParMBE without task splitting).
    rng = random.Random(7)
    lines = ["% bip posweighted"]
    for hub in (1, 2):
        for v in range(1, 16):
            if hub == 1 or v % 3:
                lines.append(f"{hub}\t{v}\t{rng.uniform(0.5, 5):.3f}")
    for u in range(3, 11):
        for v in rng.sample(range(1, 16), 2):
            lines.append(f"{u}\t{v}\t{rng.uniform(0.5, 5):.3f}")
    return "\n".join(lines) + "\n"


def random_shared_ids(n_left: int = 12, n_right: int = 10, p: float = 0.35) -> str:
    # Right ids continue after the left ones (as in Marvel), trailing spaces.
    rng = random.Random(2024)
    edges = [(u, v) for u in range(1, n_left + 1) for v in range(1, n_right + 1) if rng.random() < p]
    lines = ["%  bip  posweighted  extra-token"]
    lines += [f"{u} {n_left + v} {rng.randint(1, 5)}  " for u, v in edges]
    return "\n".join(lines) + "\n"


# archive name -> (out.* member name, text)
GRAPHS = {
    "paper-fig1": ("out.paper-fig1_example", paper_fig1()),
    "crown-8": ("out.crown-8", crown(8)),
    "complete-4x5": ("out.complete-4x5", complete_multi(4, 5)),
    "random-shared-ids": ("out.random-shared-ids", random_shared_ids()),
}
# shipped as a plain edge list (the config's ``path:`` option), not an archive
PLAIN = {"hubs": ("out.hubs", hubs())}


def archive_bytes(name: str, member: str, text: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tar:
        for fname, data in ((member, text), (f"README.{name}", f"{name}: mbe-bench test graph\n")):
            raw = data.encode()
            info = tarfile.TarInfo(f"{name}/{fname}")
            info.size, info.mtime, info.mode = len(raw), 0, 0o644
            tar.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


def main() -> None:
    for name, (member, text) in GRAPHS.items():
        (HERE / "konect" / f"download.tsv.{name}.tar.bz2").write_bytes(
            archive_bytes(name, member, text)
        )
    for _name, (member, text) in PLAIN.items():
        (HERE / "graphs" / member).write_text(text)


if __name__ == "__main__":
    main()
