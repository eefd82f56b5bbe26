"""A broken Python engine for the cross-check tests: the right number of maximal
bicliques, but not the right ones (its fingerprint is off by one bit)."""

from mbebench.engine import EngineResult
from mbebench.oracle import count_and_fingerprint


def run(graph):
    count, fp = count_and_fingerprint(graph)
    return EngineResult(count, fp ^ 1, 0.0)
