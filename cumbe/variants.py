"""The paper's variant and its ablations, written once (the spec and the engine use it).

variant -> (reverse scanning, early stop, work stealing); the first one is cuMBE
itself.  A module of its own so that the engine imports no config machinery.
"""

ABLATIONS: dict[str, tuple[bool, bool, bool]] = {
    "cuMBE": (True, True, True),
    "noRS": (False, True, True),
    "noES": (True, False, True),
    "noWS": (True, True, False),
}
VARIANTS: tuple[str, ...] = tuple(ABLATIONS)
