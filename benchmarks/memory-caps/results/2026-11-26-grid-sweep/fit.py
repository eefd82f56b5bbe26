"""The grid model's constants (cumbe.grid), fitted to the measured plans of gs.jsonl, and
how well each rule picks.  Host only:

    python benchmarks/memory-caps/results/2026-11-26-grid-sweep/fit.py DIR

DIR holds the five stand-ins of gs.jsonl (``benchmarks/standins.py --preset P --seed 1
--scale 1.0 --out DIR``).  Per measured plan (tree H, the plain layout): the block-wide tasks
(need above the plan's warp arena) and their shares of the butterflies and of the wedges
plus degrees; least squares of time over uncapped against
``1, B_max/B, B_max/B * s_butterflies, B_max/B * s_wedges``; then, per (graph, cap), the plan
each rule picks against the best measured (with LC, the compact layout, counted 1.03x).
"""

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from cumbe import engine as E  # noqa: E402
from cumbe.prepare import task_butterflies  # noqa: E402
from mbebench.csr import read_csr  # noqa: E402

HERE = Path(__file__).resolve().parent
BMAX = 1056


def main(gdir: Path) -> None:
    rows = [json.loads(x) for x in (HERE / "gs.jsonl").read_text().splitlines()]
    feats = {}
    for name in sorted({r["graph"] for r in rows}):
        prep = E.prepare_for(read_csr(gdir / name))
        feats[name] = dict(needs=E.task_needs(prep, True), cneeds=E.task_needs(prep, True, True),
                           wedges=(prep.task_wedges + prep.task_deg).astype(float),
                           bfly=task_butterflies(prep).astype(float))
    unc = {r["graph"]: r["uncapped_s"] for r in rows if r["tree"] == "H"}
    for r in rows:
        f = feats[r["graph"]]
        big = (f["cneeds"] if r["tree"] == "LC" else f["needs"]) > r["aw"]
        r["sb"] = f["bfly"][big].sum() / f["bfly"].sum()
        r["sw"] = f["wedges"][big].sum() / f["wedges"].sum()
        r["xh"] = r["s"] / unc[r["graph"]]  # over the plain layout's uncapped time
    h = [r for r in rows if r["tree"] == "H"]
    X = np.array([[1, BMAX / r["blocks"], BMAX / r["blocks"] * r["sb"],
                   BMAX / r["blocks"] * r["sw"]] for r in h])
    co = np.linalg.lstsq(X, np.array([r["xh"] for r in h]), rcond=None)[0]
    print("A, B0, C_BUTTERFLY, -C_WEDGE =", np.round(co, 3), f"({len(h)} plans)")

    def model(r):
        pen = max(0.0, co[2] * r["sb"] + co[3] * r["sw"])
        return (co[0] + BMAX / r["blocks"] * (co[1] + pen)) * (1.03 if r["tree"] == "LC" else 1)

    by = defaultdict(list)
    for r in rows:
        by[(r["graph"], r["cap"])].append(r)
    for label, trees, pick in (
            ("the rule before (plain)", ("H",), lambda v: [r for r in v if r["plan"] == "chosen"]),
            ("the model, plain", ("H",), None), ("the model, plain + compact", ("H", "LC"), None)):
        worst, logs = 0.0, []
        print(f"\n{label}:")
        for (g, cap), v in by.items():
            v = [r for r in v if r["tree"] in trees]
            best = min(r["xh"] for r in v)
            if pick is None:
                got = min((r for r in v if r["plan"] != "chosen"), key=model)
            else:
                got = pick(v)[0]
            worst = max(worst, got["xh"] / best)
            logs.append(math.log(got["xh"] / best))
            print(f"  {g[:22]:22} {cap:4} GiB: {got['tree']:2} {got['blocks']:5} blocks "
                  f"{got['block_tasks']:6} block-wide  {got['xh']:.2f}x (best {best:.2f}x)")
        print(f"  worst {worst:.3f}x the best plan, geometric mean {math.exp(np.mean(logs)):.3f}x")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
