"""The stand-ins' presets (benchmarks/standins.py): the paper's dataset sizes, the variants
(caps, exponents, planted blocks) and :func:`preset_params`, which scales a preset."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

CAP_SCALINGS = ("natural", "linear", "none")


@dataclass(frozen=True)
class Blocks:
    """Planted overlapping dense blocks (sizes and pools at scale 1)."""

    count: int
    left_size: tuple[int, int] = (5, 40)  # inclusive range
    right_size: tuple[int, int] = (5, 40)
    p: tuple[float, float] = (0.6, 0.95)
    pool_left: int = 2000
    pool_right: int = 2000


@dataclass(frozen=True)
class Params:
    """Everything :func:`generate` needs; sizes are the final (scaled) ones."""

    preset: str
    n_left: int
    n_right: int
    n_edges: int
    exponent_left: float = 2.5
    exponent_right: float = 2.5
    cap_left: int = 4000
    cap_right: int = 4000
    blocks: Blocks | None = None
    seed: int = 1
    scale: float = 1.0
    cap_scaling: str = "natural"
    drop_isolated: bool = False
    # the unscaled caps, for the record
    base: dict = field(default_factory=dict)


# The paper's sizes (|U| = CSR left, |V| = CSR right, |E| distinct edges),
# as the paper reports them.
DATASETS: dict[str, tuple[int, int, int]] = {
    "DBLP-author": (5_624_219, 1_953_085, 12_282_059),
    "IMDB-actor": (896_302, 303_617, 3_782_463),
    "stackoverflow": (545_195, 96_678, 1_301_942),
    "BookCrossing": (340_523, 105_278, 1_149_739),
    "DBpedia_locations": (53_407, 172_079, 293_697),
    # in the mirror too: the real graph is there to compare the stand-in with
    "YouTube": (94_238, 30_087, 293_360),
}

# Variant suffix -> overrides of the base preset (exponent 2.5 and cap 4000 on
# both sides).  Caps 1000..7000 bracket the hubs of the real graphs.
VARIANTS: dict[str, dict] = {
    "": {},
    "-cap1000": {"cap_left": 1000, "cap_right": 1000},
    "-cap7000": {"cap_left": 7000, "cap_right": 7000},
    "-g2.2": {"exponent_left": 2.2, "exponent_right": 2.2},
    "-g3.0": {"exponent_left": 3.0, "exponent_right": 3.0},
    "-blocks": {"blocks": "auto"},
    "-hard": {"blocks": "hard"},
}
# "-hard": 400 blocks of 40 x 40 vertices, edge probability 0.8, members from pools of 40,000
# vertices per side (0.4 memberships per pool vertex).  Alone, such a block has 3.7e6 maximal
# bicliques (iMBEA, 6 seeds: 2.98e6 to 5.26e6); overlapping blocks add some: at scale 0.05
# (20 blocks, pools of 2,000, the same overlap) IMDB-actor-hard has 1.00e8 and
# BookCrossing-hard 9.5e7 (seed 1), so about 2e9 at scale 1, nearly independent of the dataset
# and the seed (a sum of 400 blocks), spread over thousands of first-level tasks of similar
# size: the multi-GPU benchmark's graphs (benchmarks/multi-gpu).
HARD_BLOCKS = Blocks(count=400, left_size=(40, 40), right_size=(40, 40), p=(0.8, 0.8),
                     pool_left=40_000, pool_right=40_000)


def _auto_blocks(n_edges: int) -> Blocks:
    # about 2.5 % of the edges in blocks (mean block ~22 x 22 x 0.78 = 380 edges)
    return Blocks(count=max(1, round(n_edges / 15_000)))


def preset_names() -> list[str]:
    return [d + v for d in DATASETS for v in VARIANTS]


def preset_params(
    name: str,
    seed: int = 1,
    scale: float = 1.0,
    cap_scaling: str = "natural",
    drop_isolated: bool = False,
    **overrides,
) -> Params:
    """The parameters of preset ``name`` at ``scale`` (overrides: any field of
    :class:`Params` at scale 1, e.g. ``cap_left=2000`` or ``blocks=Blocks(10)``)."""
    for d in sorted(DATASETS, key=len, reverse=True):
        if name.startswith(d) and name[len(d) :] in VARIANTS:
            dataset, variant = d, name[len(d) :]
            break
    else:
        raise KeyError(f"unknown preset {name!r}; --list shows them")
    if cap_scaling not in CAP_SCALINGS:
        raise ValueError(f"cap_scaling must be one of {CAP_SCALINGS}")
    if not (0 < scale <= 1.0):
        raise ValueError("scale must be in (0, 1]")
    nl, nr, ne = DATASETS[dataset]
    base = {
        "n_left": nl,
        "n_right": nr,
        "n_edges": ne,
        "exponent_left": 2.5,
        "exponent_right": 2.5,
        "cap_left": 4000,
        "cap_right": 4000,
        "blocks": None,
    }
    base.update(VARIANTS[variant])
    base.update(overrides)
    if base["blocks"] == "auto":
        base["blocks"] = _auto_blocks(base["n_edges"])
    elif base["blocks"] == "hard":
        base["blocks"] = HARD_BLOCKS

    def cap(c, exponent):
        if cap_scaling == "none":
            f = 1.0
        elif cap_scaling == "linear":
            f = scale
        else:
            f = scale ** (1.0 / (exponent - 1.0))
        return max(1, round(c * f))

    blocks = base["blocks"]
    if blocks is not None and scale != 1.0:
        blocks = dataclasses.replace(
            blocks,
            count=max(1, round(blocks.count * scale)),
            pool_left=max(2 * blocks.left_size[1], round(blocks.pool_left * scale)),
            pool_right=max(2 * blocks.right_size[1], round(blocks.pool_right * scale)),
        )
    return Params(
        preset=name,
        n_left=max(1, round(base["n_left"] * scale)),
        n_right=max(1, round(base["n_right"] * scale)),
        n_edges=max(1, round(base["n_edges"] * scale)),
        exponent_left=base["exponent_left"],
        exponent_right=base["exponent_right"],
        cap_left=cap(base["cap_left"], base["exponent_left"]),
        cap_right=cap(base["cap_right"], base["exponent_right"]),
        blocks=blocks,
        seed=int(seed),
        scale=float(scale),
        cap_scaling=cap_scaling,
        drop_isolated=drop_isolated,
        base={k: v for k, v in base.items() if k != "blocks"},
    )
