"""Where does iMBEA's search spend more work than ParMBE's?  Counts and times of
the engines' own searches built with work counters (baselines._work) and the
design switches of ``baselines._imbea_kernel.build`` /
``baselines._parmbe_kernel.build``, one design factor at a time, on one CSR
graph.

    python benchmarks/cpu/work_analysis.py GRAPH.csr [--variants NAME,NAME,...]
        [--no-engines] [--every K [--first J]] [--shuffle-tasks SEED] [--json OUT.jsonl]
        [--label TEXT]

A variant is ``FAMILY[:key=value,...]``: family ``imbea`` (bitset rows, Q) or
``parmbe`` (per-vertex lists, closure), keys as the arguments of the two
``build`` functions plus ``side`` (imbea: auto|left|right|other, auto = the engine's choice by sum
of squared degrees; parmbe: smaller|larger|left|right|other, smaller = the
engine's) and ``order`` (first-level rank: asc = (degree, id) as both engines,
desc, random, wedge = (2-hop paths, degree), peel = a bipartite core peel's order).  Named
presets: see ``PRESETS`` (``--variants all``).

Every variant's count and fingerprint are compared with the engines'
(baselines.imbea.run and baselines.parmbe.run_serial, also timed, unless
--no-engines; then with the first variant's): a disagreement is printed as
DISAGREE and the exit status is 1.  Times are one run each, after a JIT
warm-up on a tiny graph, in this process.  ``--every K`` runs every K-th first-level task
in rank order only (a sample of a graph too large to model whole; the variants then agree
with each other, the engines are not run); ``--first J`` starts the sample at task J, so
that K runs, J = 0..K-1, cover the graph once (their counts and fingerprints add up).
``--shuffle-tasks SEED`` runs the first-level tasks in a random order (the ranks, and so the
search, unchanged), as a GPU's workers take them in no rank order: what a memo across tasks
(``parmbe:memo=K``) finds depends on it.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from baselines import _imbea_kernel, _parmbe_kernel, imbea, parmbe, parmbe_plan  # noqa: E402
from baselines._imbea_parts import elem_weights  # noqa: E402
from baselines._work import as_dict, new_counters  # noqa: E402
from mbebench.csr import CSRGraph, from_edges, read_csr  # noqa: E402
from mbebench.order import twin_filter  # noqa: E402
from mbebench.side import candidates_on_left  # noqa: E402

IMBEA_DEFAULT = {"side": "auto", "order": "asc", "wmode": 0, "check": 0, "buildq": 1, "twin": 1}
BUILD_KEYS = ("wmode", "check", "buildq", "twin")  # _imbea_kernel.build's arguments, in order
PARMBE_DEFAULT = {"side": "smaller", "order": "asc", "skip": 1, "vmajor": 0, "wcache": 0,
                  "wstatic": 0, "dense": 0, "degcut": 0, "memo": 0}

# name -> variant string; the first of each family is the engine's own setting
PRESETS = {
    "I": "imbea",
    "I-side": "imbea:side=other",
    "I-desc": "imbea:order=desc",
    "I-random": "imbea:order=random",
    "I-twin0": "imbea:twin=0",
    "I-twin2": "imbea:twin=2",
    "I-wtask": "imbea:wmode=1",
    "I-closure": "imbea:check=1,twin=2",
    "I-closure-twin0": "imbea:check=1,twin=0",
    "I-closure-noQ'": "imbea:check=1,twin=2,buildq=0",
    "I-all": "imbea:check=1,twin=2,buildq=0,wmode=1",
    "I-all-twin0": "imbea:check=1,twin=0,buildq=0,wmode=1",
    "P": "parmbe",
    "P-side": "parmbe:side=other",
    "P-desc": "parmbe:order=desc",
    "P-random": "parmbe:order=random",
    "P-wedge": "parmbe:order=wedge",
    "P-peel": "parmbe:order=peel",
    "P-skip0": "parmbe:skip=0",
    "P-vmajor": "parmbe:vmajor=1",
    "P-wcache": "parmbe:wcache=1",
    "P-wstatic": "parmbe:wstatic=4",
    "P-wstatic16": "parmbe:wstatic=16",
    "P-dense": "parmbe:dense=64",
    "P-degcut": "parmbe:degcut=1",
    "P-memo": "parmbe:memo=1",
}


def parse_variant(text: str) -> tuple[str, dict]:
    text = PRESETS.get(text, text)
    fam, _, rest = text.partition(":")
    if fam not in ("imbea", "parmbe"):
        raise ValueError(f"unknown family in {text!r}")
    spec = dict(IMBEA_DEFAULT if fam == "imbea" else PARMBE_DEFAULT)
    for kv in filter(None, rest.split(",")):
        k, _, v = kv.partition("=")
        if k not in spec:
            raise ValueError(f"unknown key {k!r} for {fam}")
        spec[k] = v if k in ("side", "order") else int(v)
    # the builders refuse the combinations they do not offer
    if fam == "imbea":
        _imbea_kernel.build(*(spec[k] for k in BUILD_KEYS))
    else:
        parmbe_build(spec)
    return fam, spec


def _peel(c_off, c_idx, l_off, l_idx):
    """Candidates in the order a bipartite core peel removes them (both sides peeled, the
    vertex of least remaining degree first; a candidate's position is its removal)."""
    nc, nl = c_off.size - 1, l_off.size - 1
    deg = np.concatenate([np.diff(c_off), np.diff(l_off)]).astype(np.int64)
    heap = [(int(d), i) for i, d in enumerate(deg)]
    heapq.heapify(heap)
    gone = np.zeros(nc + nl, bool)
    out = []
    while heap:
        d, i = heapq.heappop(heap)
        if gone[i] or d != deg[i]:
            continue
        gone[i] = True
        if i < nc:
            out.append(i)
            nb = c_idx[c_off[i]:c_off[i + 1]] + nc
        else:
            nb = l_idx[l_off[i - nc]:l_off[i - nc + 1]]
        for j in nb:
            if not gone[j]:
                deg[j] -= 1
                heapq.heappush(heap, (int(deg[j]), int(j)))
    return np.array(out, np.int64)


def ranks(order: str, c_off: np.ndarray, c_idx: np.ndarray, l_off: np.ndarray,
          l_idx: np.ndarray) -> np.ndarray:
    deg = np.diff(c_off)
    if order == "wedge":  # 2-hop paths, then degree
        cs = np.concatenate([[0], np.cumsum(np.diff(l_off)[c_idx])])
        w = cs[c_off[1:]] - cs[c_off[:-1]]
        o = np.lexsort((deg, w))
    elif order == "peel":
        o = _peel(c_off, c_idx, l_off, l_idx)
    elif order == "asc":
        o = np.argsort(deg, kind="stable")
    elif order == "desc":
        o = np.argsort(-deg, kind="stable")
    elif order == "random":
        o = np.random.default_rng(12345).permutation(deg.size)
    else:
        raise ValueError(f"order must be asc, desc, random, wedge or peel, not {order!r}")
    r = np.empty(deg.size, np.int64)
    r[o] = np.arange(deg.size)
    return r


def _arr(a, dt):
    # a writable copy: memory-mapped (read-only) arrays would be a second numba
    # signature, compiled inside the first timed run
    return np.array(a, dtype=dt, copy=True)


def cand_side(graph: CSRGraph, fam: str, side: str) -> bool:
    """True if the candidate / split side is the CSR's left side."""
    eng = candidates_on_left(graph, "auto" if fam == "imbea" else "smaller")
    if side == "other":
        return not eng
    return eng if side == "auto" else candidates_on_left(graph, side)


def candidate_arrays(graph: CSRGraph, fam: str, spec: dict) -> tuple:
    """(candidates on the left?, candidate offsets, indices, other side's offsets, indices,
    rank) as a variant's search takes them."""
    left = cand_side(graph, fam, spec["side"])
    lo, li = _arr(graph.left_offsets, np.int64), _arr(graph.left_indices, np.int32)
    ro, ri = _arr(graph.right_offsets, np.int64), _arr(graph.right_indices, np.int32)
    c_off, c_idx, l_off, l_idx = (lo, li, ro, ri) if left else (ro, ri, lo, li)
    return left, c_off, c_idx, l_off, l_idx, ranks(spec["order"], c_off, c_idx, l_off, l_idx)


def parmbe_build(spec: dict):
    """The counters build of ParMBE's search with a variant's switches."""
    return _parmbe_kernel.build(skip=bool(spec["skip"]), vmajor=bool(spec["vmajor"]),
                                wcache=bool(spec["wcache"]), wstatic=int(spec["wstatic"]),
                                dense=int(spec["dense"]), degcut=bool(spec["degcut"]),
                                memo=int(spec["memo"]))


def parmbe_tasks(c_off: np.ndarray, order: np.ndarray) -> np.ndarray:
    """ParMBE's first-level tasks in rank order (``order``): every candidate with neighbours."""
    return order[np.diff(c_off)[order] > 0]


def run_variant(graph: CSRGraph, name: str, every: int = 1, first: int = 0,
                shuffle: int | None = None) -> dict:
    """One variant's run: its count, fingerprint, times and counters; ``every``, ``first``:
    the first-level tasks ``first``, ``first + every``, ... in rank order only (a sample);
    ``shuffle``: ParMBE's tasks in a random order of this seed (the ranks unchanged)."""
    fam, spec = parse_variant(name)
    left, c_off, c_idx, l_off, l_idx, rank = candidate_arrays(graph, fam, spec)
    ctr = new_counters()
    t0, c0 = time.perf_counter(), time.process_time()
    order = np.argsort(rank).astype(np.int32)
    if fam == "imbea":
        search = _imbea_kernel.build(*(spec[k] for k in BUILD_KEYS))
        start = twin_filter(c_off, c_idx, rank)
        tasks = order[start[order]][first::every]
        w_left, w_right = elem_weights(graph.n_left, graph.n_right)
        wc, wl = (w_left, w_right) if left else (w_right, w_left)
        ones = np.ones(tasks.size, np.int32)  # whole subtrees: piece 0 of 1
        count, fp, *_ = search(c_off, c_idx, l_off, l_idx, wc, wl, left, rank, tasks, ones - 1,
                               ones, False, ctr)
    else:
        search = parmbe_build(spec)
        verts = parmbe_tasks(c_off, order)[first::every]
        if shuffle is not None:
            verts = verts[np.random.default_rng(shuffle).permutation(verts.size)]
        ones = np.ones(verts.size, np.int32)  # whole subproblems: piece 0 of 1
        cnt, slot, touched, buf = parmbe_plan.new_scratch(c_off, l_off)
        count, fp = search(c_off, c_idx, l_off, l_idx, rank.astype(np.int32), verts, ones - 1,
                           ones, left, cnt, slot, touched, buf, ctr)  # fmt: skip
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "variant": name,
        "family": fam,
        "spec": spec,
        "cand_side": "left" if left else "right",
        "count": int(count),
        "fingerprint": f"0x{int(fp):016x}",
        "seconds": round(secs, 3),
        "cpu_seconds": round(cpu, 3),
        "counters": as_dict(ctr),
        "every": every,
        "first": first,
        "shuffle_tasks": shuffle if fam == "parmbe" else None,  # (iMBEA's run in rank order)
    }


def warm_up() -> None:
    rng = np.random.default_rng(0)
    m = rng.random((9, 14)) < 0.4
    g = from_edges(*np.nonzero(m), 9, 14)
    for v in PRESETS:
        run_variant(g, v)


def engines(graph: CSRGraph) -> list[dict]:
    out = []
    c0 = time.process_time()
    r = imbea.run(graph)
    out.append(("engine:imbea", r, r.stats["side"], time.process_time() - c0))
    c0 = time.process_time()
    r = parmbe.run_serial(graph)
    out.append(("engine:parmbe-serial", r, r.stats["side"], time.process_time() - c0))
    return [
        {
            "variant": n,
            "cand_side": s,
            "count": int(r.count),
            "fingerprint": f"0x{int(r.fingerprint):016x}",
            "seconds": round(r.algo_seconds, 3),
            # process CPU seconds of the whole call, JIT warm-up (cache load) included
            "cpu_seconds_call": round(cpu, 3),
            "stats": {k: v for k, v in r.stats.items() if k != "worker_busy_s"},
        }
        for n, r, s, cpu in out
    ]


SHOW = ("nodes", "nonmax", "n2_scan", "local_build", "zero_words", "lprime", "qcheck",
        "qcheck_q1", "qcheck_max", "expand", "closure", "closure_max", "closure_tests",
        "closure_lists", "closure_long", "closure_at0", "closure_at1", "closure_at2",
        "closure_tried", "closure_tried_r", "closure_rounds32", "sort", "witness_hits",
        "witness_cost")  # fmt: skip


def fmt_row(r: dict) -> str:
    c = r.get("counters")
    cpu = r.get("cpu_seconds", r.get("cpu_seconds_call"))
    cols = [f"{r['variant']:16s}", f"{r['cand_side']:5s}", f"{r['seconds']:8.2f}", f"{cpu:8.2f}"]
    if c:
        cols += [f"{c[k] / 1e6:9.1f}" for k in SHOW]
    return " ".join(cols)


MD_COLS = ("nodes", "nonmax", "qcheck", "qcheck_q1", "qcheck_max", "expand", "closure",
           "closure_max", "zero_words", "n2_scan")  # fmt: skip


def markdown(rec: dict) -> str:
    """One record as a markdown table: seconds, CPU seconds, counters in millions."""
    head = ["variant", "side", "wall s", "CPU s"] + [f"{c} (M)" for c in MD_COLS]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for r in rec["rows"]:
        c = r.get("counters", {})
        cpu = r.get("cpu_seconds", r.get("cpu_seconds_call"))
        vals = [f"{c[k] / 1e6:.1f}" if c else "" for k in MD_COLS]
        out.append("| " + " | ".join([r["variant"], r["cand_side"], f"{r['seconds']:.2f}",
                                      f"{cpu:.2f}"] + vals) + " |")  # fmt: skip
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path, nargs="?")
    ap.add_argument("--table", type=Path, help="print the last record of this JSONL as markdown")
    ap.add_argument("--variants", default="all")
    ap.add_argument("--no-engines", action="store_true")
    ap.add_argument("--every", type=int, default=1, metavar="K",
                    help="every K-th first-level task only (implies --no-engines)")
    ap.add_argument("--first", type=int, default=0, metavar="J",
                    help="with --every K: tasks J, J + K, ... (the K values of J cover the graph)")
    ap.add_argument("--shuffle-tasks", type=int, default=None, metavar="SEED",
                    help="ParMBE's first-level tasks in a random order (the ranks unchanged)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--label", default="")
    a = ap.parse_args(argv)
    if a.table:
        print(markdown(json.loads(a.table.read_text().splitlines()[-1])))
        return 0
    if a.graph is None:
        ap.error("give a graph (or --table)")
    if a.every < 1:
        ap.error("--every must be at least 1")
    if not 0 <= a.first < a.every:
        ap.error("--first must be at least 0 and below --every")
    a.no_engines = a.no_engines or a.every > 1
    names = list(PRESETS) if a.variants == "all" else a.variants.split(",")
    for n in names:
        parse_variant(n)
    g = read_csr(a.graph)
    side = a.graph.with_suffix(".json")
    meta = json.loads(side.read_text()) if side.is_file() else None
    t = time.perf_counter()
    warm_up()
    print(f"# warm-up {time.perf_counter() - t:.1f} s; {a.graph}: |L|={g.n_left} |R|={g.n_right} "
          f"|E|={g.n_edges}", flush=True)  # fmt: skip
    print("# variant       cand  seconds  cpu_s   " + " ".join(f"{k[:9]:>9s}" for k in SHOW) + "  (x 1e6)")
    rows = []
    ref = None
    if not a.no_engines:
        for r in engines(g):
            rows.append(r)
            print(fmt_row(r), r["count"], r["fingerprint"], flush=True)
        ref = (rows[0]["count"], rows[0]["fingerprint"])
    bad = 0
    for n in names:
        r = run_variant(g, n, a.every, a.first, a.shuffle_tasks)
        rows.append(r)
        if ref is None:
            ref = (r["count"], r["fingerprint"])
        ok = (r["count"], r["fingerprint"]) == ref
        bad += not ok
        print(fmt_row(r), r["count"], r["fingerprint"], "" if ok else "DISAGREE", flush=True)
    for r in rows[:2]:
        if not a.no_engines and (r["count"], r["fingerprint"]) != ref:
            print("DISAGREE between the engines:", r["variant"], flush=True)
            bad += 1
    if a.json:
        rec = {
            "graph": str(a.graph),
            "label": a.label,
            "graph_meta": meta,
            "sizes": {"n_left": g.n_left, "n_right": g.n_right, "n_edges": g.n_edges},
            "host": {"hostname": platform.node(), "cpu_count": os.cpu_count(),
                     "python": platform.python_version(), "load": os.getloadavg()},
            "command": " ".join([sys.executable.split("/")[-1]] + sys.argv),
            "rows": rows,
            "agree": bad == 0,
        }  # fmt: skip
        a.json.parent.mkdir(parents=True, exist_ok=True)
        with open(a.json, "a") as f:
            f.write(json.dumps(rec) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
