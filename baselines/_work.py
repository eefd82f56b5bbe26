"""Work counters of the instrumented CPU kernels (the CPU benchmarks' work analysis).

The iMBEA and ParMBE kernels take ``ctr``: ``None`` for the engines, or an
int64 array of ``NCTR`` counters that the search adds to.  Numba compiles the
``None`` case as its own specialisation and prunes every ``if ctr is not
None`` branch, so the engines run the search without a trace of the counting.

"Elements" are neighbour-list entries read; "words" are 64-bit bitset words
read (iMBEA keeps N(v) ∩ N(x0) as a bitset row over the positions of N(x0)).
"""

from __future__ import annotations

import numpy as np

COUNTERS = (
    "tasks",  # first-level subtrees entered (N2 scanned)
    "killed",  # ... found non-maximal at the first level
    "nodes",  # candidates tried below the first level
    "nonmax",  # ... whose biclique was not maximal
    "bicliques",
    "n2_scan",  # elements: N(u) for u in N(x0), counting |N(w) ∩ N(x0)|
    "local_build",  # elements: second pass filling rows / restricted lists
    "zero_words",  # words: rows zeroed per task
    "lprime",  # L' construction: words ANDed / elements marked
    "qcheck",  # maximality by Q: words read
    "qverts",  # ... Q vertices visited
    "expand",  # expansion / child tail: words read (bitset) or elements (lists)
    "pverts",  # ... P / tail vertices visited
    "closure",  # maximality by closure: global-list elements read
    "sort",  # candidate selection: keys sorted
    "p1",  # first-level P' sizes, summed
    "q1",  # first-level Q' sizes, summed
    "report",  # L' elements hashed for the fingerprint
    "qcheck_q1",  # part of qcheck spent on first-level Q' (lower-rank) vertices
    "qcheck_max",  # part of qcheck spent at maximal nodes (a full scan of Q)
    "closure_max",  # part of closure spent at maximal nodes
    "closure_tests",  # maximality tests by closure
    "closure_lists",  # ... lists intersected in them (the shortest one, copied, not counted)
    "closure_long",  # ... tests whose shortest list holds more than 32 vertices
    "witness_hits",  # branches a cached lower-ranked witness rejected (no closure test)
    "witness_cost",  # ... binary-search steps testing cached witnesses
    "closure_at0",  # closure tests the shortest list settles (no longer than the target)
    "closure_at1",  # ... settled by one more list
    "closure_at2",  # ... by two more (the rest: closure_tests minus these three)
    "closure_tried",  # vertices of the running intersection looked up in the next list
    "closure_tried_r",  # ... of them the node's own right side (always there: |R'| a list)
    "closure_rounds32",  # rounds of a 32-lane model: R' left out, 32 // (vertices left) lists
    "closure_scan",  # elements: the lengths of Γ''s lists read to find the shortest
    "closure_scan_stop",  # ... in 32-entry chunks stopping at the first no longer than the target
    "rounds_gpu",  # rounds of today's GPU check: 32 >> ceil(log2 s) lists while s <= 32, else 1
    "rounds_mid",  # ... and 2 lists a round while 33 <= s <= 64 (pairs 4 a lane)
    "rounds_wide",  # ... 128 >> ceil(log2 s) lists a round while s <= 128 (pairs 4 a lane)
    "pw_class",  # a check that knows P: the shortest list's vertices classified (witness or not)
    "pw_tried",  # ... witnesses of the running intersection looked up in the next list
    "pw_lists",  # ... lists it intersects (none once no witness is left)
    "pw_disagree",  # ... tests whose verdict differs from the closure test's (must stay 0)
    "pw_expand_rejected",  # expansion elements read at nodes the closure test rejects
    "closure_chunks",  # 32-vertex chunks the test reads: the shortest list's, then its survivors'
    "dense_roots",  # bit-word subtrees (build(dense=T)): nodes whose Γ of at most T vertices
    # became the positions of the words
    "dense_build",  # ... elements N(y), y in that Γ, read to build the words (twice)
    "dense_tests",  # ... branch tests on words
    "dense_words",  # ... words they read (the list of one position, heaviest words first)
    "dense_pverts",  # ... tail vertices intersected as words
    "dense_chunks",  # ... 32-word chunks the tests read (a warp's steps)
    "dense_entries",  # ... list entries kept (words of two bits or more), over all roots
    "dense_peak",  # ... the most entries N(y) of one root's positions hold (a maximum, not a sum)
    "dense_global",  # ... words a test would read from one list of all the root's words
    # (heaviest first, down to the first lighter than Γ'; no early stop: a bound), not one
    # position's
    "dense_wverts",  # ... vertices with a word (two bits or more), over all roots
    "dense_union",  # ... vertices with a word (any), over all roots: a merge's steps
    "closure_degcut",  # build(degcut=True): the shortest lists' vertices of degree below |Γ'|
    "memo_hits",  # build(memo=True): branches a memo of earlier Γ's rejects (its witness,
    # ranked below the task's root, checked to contain Γ')
    "memo_closure",  # ... closure elements those branches' tests read
    "memo_expand",  # ... expansion elements those branches read
    "memo_verify",  # ... lookups that check the memo's witnesses (|Γ'| a probe that finds one)
    "memo_keys",  # ... Γ's it stored (distinct ones, in an unbounded memo)
    "memo_missed",  # ... rejected branches it did not settle
    "memo_bad",  # ... a found Γ' whose witness does not contain it, or a hit the test keeps
)
NCTR = len(COUNTERS)
(
    C_TASKS,
    C_KILLED,
    C_NODES,
    C_NONMAX,
    C_BICLIQUES,
    C_N2,
    C_BUILD,
    C_ZERO,
    C_LPRIME,
    C_QCHECK,
    C_QVERTS,
    C_EXPAND,
    C_PVERTS,
    C_CLOSURE,
    C_SORT,
    C_P1,
    C_Q1,
    C_REPORT,
    C_QCHECK1,
    C_QCHECKMAX,
    C_CLOSUREMAX,
    C_CTESTS,
    C_CLISTS,
    C_CLONG,
    C_WHITS,
    C_WCOST,
    C_CAT0,
    C_CAT1,
    C_CAT2,
    C_CTRIED,
    C_CTRIEDR,
    C_CROUNDS,
    C_CSCAN,
    C_CSCANSTOP,
    C_RGPU,
    C_RMID,
    C_RWIDE,
    C_PWCLASS,
    C_PWTRIED,
    C_PWLISTS,
    C_PWDIS,
    C_PWXREJ,
    C_CCHUNKS,
    C_DROOTS,
    C_DBUILD,
    C_DTESTS,
    C_DWORDS,
    C_DPVERTS,
    C_DCHUNKS,
    C_DENTRIES,
    C_DPEAK,
    C_DGLOBAL,
    C_DWVERTS,
    C_DUNION,
    C_CDEGCUT,
    C_MHITS,
    C_MCLOSURE,
    C_MEXPAND,
    C_MVERIFY,
    C_MKEYS,
    C_MMISSED,
    C_MBAD,
) = range(NCTR)


def new_counters() -> np.ndarray:
    return np.zeros(NCTR, np.int64)


def as_dict(ctr: np.ndarray) -> dict[str, int]:
    return dict(zip(COUNTERS, (int(x) for x in ctr)))
