"""The paper's variant and its ablations, written once (the spec and the engine use it),
and the variants beyond the paper.

variant -> (reverse scanning, early stop, work stealing); the first one is cuMBE
itself.  A module of its own so that the engine imports no config machinery.

``cuMBE-dense`` is cuMBE with the dense leaf search (:mod:`cumbe.kernel.dense`): small
subtrees run as bitsets in a warp's registers.  It is not the paper's algorithm, so it is a
variant (a column) of its own, and the paper's four builds keep their machine code.
"""

ABLATIONS: dict[str, tuple[bool, bool, bool]] = {
    "cuMBE": (True, True, True),
    "noRS": (False, True, True),
    "noES": (True, False, True),
    "noWS": (True, True, False),
    "cuMBE-dense": (True, True, True),
}
# the variants built with the dense leaf search (kernel.build(dense=True))
DENSE: frozenset[str] = frozenset({"cuMBE-dense"})
VARIANTS: tuple[str, ...] = tuple(ABLATIONS)
# the paper's variant and its ablations (Table I, Fig. 6 and 7)
PAPER: tuple[str, ...] = ("cuMBE", "noRS", "noES", "noWS")


def build_switches(variant: str) -> dict:
    """The kernel.build switches of ``variant``: rs, es, ws and dense."""
    rs, es, ws = ABLATIONS[variant]
    return {"rs": rs, "es": es, "ws": ws, "dense": variant in DENSE}
