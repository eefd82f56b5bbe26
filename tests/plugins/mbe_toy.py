"""A Python engine brought by the config (README, "Bring your own engine").

Not a real MBE algorithm: the brute force of mbebench.oracle, fine for the tiny
graphs in .test/.  ``side`` says which side's subsets it tries, so a sweep
``params: {side: [left, right]}`` gives two runs that must agree.
"""

import time

from mbebench.engine import EngineResult
from mbebench.fingerprint import fingerprint_py
from mbebench.oracle import maximal_bicliques


def run(graph, side="left"):
    t0 = time.perf_counter()
    if side == "left":
        found = maximal_bicliques(graph)
    elif side == "right":  # the swapped graph's pairs are (right, left): swap them back
        found = {(a, b) for b, a in maximal_bicliques(graph.swapped())}
    else:
        raise ValueError(f"side must be left or right, not {side!r}")
    return EngineResult(len(found), fingerprint_py(found), time.perf_counter() - t0)
