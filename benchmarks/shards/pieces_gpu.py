"""cuMBE's heavy first-level tasks in pieces, on the GPU: exact sums and what a piece costs.

    python benchmarks/shards/pieces_gpu.py --shards 7 --pieces 4 G1.csr [G2.csr ...] > runs.jsonl

Per graph, one JSON line: the whole run (count, fingerprint, kernel seconds); the ``--shards``
shards run one after another (each a launch, heavy tasks in pieces, :func:`cumbe.prepare.split`)
with their summed count and fingerprint, how many of their items are pieces and the largest
shard's kernel seconds; and one launch with every task in up to ``--pieces`` pieces (every
piece runs its task's level-0 nodes again: the cost of the rule, against the whole run).
``ok`` is true when both sums equal the whole run.  The kernels are compiled (or loaded)
before the first timed run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cumbe import engine as E
from cumbe.prepare import shard_of, split
from mbebench.csr import read_csr

MASK = (1 << 64) - 1


def measure(path: str, n: int, pieces: int) -> dict:
    g = read_csr(path)
    E.run(g)  # compile or cache load, first launch
    whole = E.run(g)
    prep = E.prepare_for(g)
    c = f = 0
    shard_s, items, split_items = [], 0, 0
    for i in range(n):
        sp, _ = shard_of(prep, f"{i}/{n}")
        items += int(sp.tasks.size)
        split_items += int((sp.task_nk > 1).sum())
        r = E.run(g, shard=f"{i}/{n}", prepared=prep)
        c += r.count
        f = (f + r.fingerprint) & MASK
        shard_s.append(r.stats["kernel_s"])
    pp = split(prep, 1.0, pieces)
    rp = E.run(g, prepared=pp)
    return {
        "graph": Path(path).stem, "count": whole.count, "fp": hex(whole.fingerprint),
        "kernel_s": whole.stats["kernel_s"], "tasks": int(prep.tasks.size),
        "shards": n, "shard_items": items, "shard_pieces": split_items,
        "shards_sum_ok": (c, f) == (whole.count, whole.fingerprint),
        "shard_kernel_s": shard_s, "pieces": pieces, "piece_items": int(pp.tasks.size),
        "pieces_ok": (rp.count, rp.fingerprint) == (whole.count, whole.fingerprint),
        "pieces_kernel_s": rp.stats["kernel_s"],
        "ok": (c, f) == (whole.count, whole.fingerprint)
        and (rp.count, rp.fingerprint) == (whole.count, whole.fingerprint),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="pieces_gpu.py")
    ap.add_argument("--shards", type=int, default=7)
    ap.add_argument("--pieces", type=int, default=4)
    ap.add_argument("graphs", nargs="+")
    a = ap.parse_args(argv)
    bad = 0
    for path in a.graphs:
        row = measure(path, a.shards, a.pieces)
        bad += not row["ok"]
        print(json.dumps(row), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
