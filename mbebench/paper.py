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
# Fig. 6, top: the reference engine's thread blocks with and without work stealing
NO_WORK_STEALING = "noWS"
# Fig. 6, bottom, and the scaling plot: the CPU engine whose workers are processes
WORKERS = {"engine": "parmbe", "param": "processes"}
