"""What the paper's Table I and figures show, as selections of rows by their fields.

The one place where the aggregate step names engines; the summary table and
the agreement check work on any engine's rows.  Rows are chosen by ``engine``,
``variant``, ``params`` and ``timed`` (:func:`mbebench.rows.select`), never by
run id.  Instrumented builds are the rows with ``timed: false``.
"""

from __future__ import annotations

# Table I: speedups of this configuration over every other engine's timed runs
# (the reference engine's other variants are ablations, shown in Fig. 7).
REFERENCE = {"engine": "cumbe", "variant": "cuMBE"}
REFERENCE_LABEL = "cuMBE"  # its column when no row of it exists
# Beyond the paper: the reference engine's switch for a technique of ours (the maximality
# check in rounds), a column of its own in Table I and a bar of its own in Fig. 7 beside
# the reference's, labelled as the run labels show it
TECHNIQUE = {"param": "rounds", "label": "rounds"}
# Fig. 6, top: the reference engine's workers (warps) with and without work stealing
NO_WORK_STEALING = "noWS"
# Fig. 6, bottom, and the scaling plot: the CPU engine whose workers are processes
WORKERS = {"engine": "parmbe", "param": "processes"}

# The paper's datasets in the order of its Table I, with |U|, |V| and |E| as it reports
# them (Hsieh et al., "Accelerating Maximal Biclique Enumeration on GPUs", Table I, as
# transcribed in ../shared/datasets.md).  Tables show our sizes in this orientation and
# the vs-paper table puts them side by side.  The first seven are the paper's "large"
# datasets, the other six its "small" ones (Section V-B).
DATASETS = {
    "DBLP-author": (5_624_219, 1_953_085, 12_282_059),
    "DBpedia_locations": (53_407, 172_079, 293_697),
    "Marvel": (12_942, 6_486, 96_662),
    "YouTube": (94_238, 30_087, 293_360),
    "IMDB-actor": (896_302, 303_617, 3_782_463),
    "stackoverflow": (545_195, 96_678, 1_301_942),
    "BookCrossing": (340_523, 105_278, 1_149_739),
    "corporate-leadership": (24, 20, 99),
    "movielens-t-i": (7_601, 16_528, 71_154),
    "movielens-u-i": (7_601, 4_009, 55_484),
    "movielens-u-t": (16_528, 4_009, 43_760),
    "UCforum": (522, 899, 7_089),
    "Unicode": (614, 254, 1_255),
}
LARGE = tuple(DATASETS)[:7]

# Table I's per-dataset numbers (#maximal bicliques, RTX 3090 cuMBE seconds, ParMBE
# seconds): dataset -> {"count": int, "cumbe_s": float, "parmbe_s": float}.  Our copy of
# the paper (../shared/paper/cuMBE-paper.tex) leaves Table I out, so none are transcribed;
# the vs-paper table says so in those cells rather than show numbers we cannot cite.
TABLE_I: dict[str, dict[str, float]] = {}

# The speedups the paper's text publishes (where, in ``source``; ``stat``: over its
# datasets, "average" read as the arithmetic mean): what
# they compare, as selections of our rows.  ``ours``: "parmbe" = cuMBE over the ParMBE
# run with the most processes, "serial" = cuMBE over the serial engine (the paper's
# serial baseline is ooMBE, ours iMBEA), "noWS" = noWS over cuMBE on ``datasets``.
PUBLISHED = (
    {"figure": "cuMBE vs ParMBE, geometric mean", "paper": 6.3, "ours": "parmbe",
     "datasets": None, "stat": "geometric mean", "source": "abstract"},
    {"figure": "cuMBE vs ParMBE, average (Intel, 64 cores)", "paper": 7.1, "ours": "parmbe",
     "datasets": None, "stat": "mean", "source": "Sec. V-B"},
    {"figure": "cuMBE vs ParMBE, average (AMD, 96 cores)", "paper": 5.5, "ours": "parmbe",
     "datasets": None, "stat": "mean", "source": "Sec. V-B"},
    {"figure": "cuMBE vs serial (paper: ooMBE; ours: ooMBE if run, else iMBEA), geometric mean",
     "paper": 6.1,
     "ours": "serial", "datasets": None, "stat": "geometric mean", "source": "abstract"},
    {"figure": "work stealing (noWS / cuMBE), large datasets, average", "paper": 2.18,
     "ours": "noWS", "datasets": "large", "stat": "mean", "source": "Sec. V-D"},
    {"figure": "work stealing (noWS / cuMBE), small datasets, average", "paper": 1.64,
     "ours": "noWS", "datasets": "small", "stat": "mean", "source": "Sec. V-D"},
    {"figure": "work stealing (noWS / cuMBE), Marvel", "paper": 1.7, "ours": "noWS",
     "datasets": ("Marvel",), "stat": "mean", "source": "Sec. V-D"},
    {"figure": "work stealing (noWS / cuMBE), movielens-u-t", "paper": 2.7, "ours": "noWS",
     "datasets": ("movielens-u-t",), "stat": "mean", "source": "Sec. V-D"},
)
SERIAL = {"engine": "imbea"}  # our serial baseline (the paper's is ooMBE)
# the paper's own serial baseline, when the pipeline ran it (mbebench.published): preferred
PAPER_SERIAL = {"engine": "oombea"}
