"""The one row-selection layer under every table and figure of the report.

Rows are chosen by their fields (dataset, engine, variant, params, timed, status;
:func:`mbebench.rows.select`), never by parsing a run id or a label.  What the
paper's tables and figures show is named once, in :mod:`mbebench.paper`.  This
module turns loaded rows into the few things every table or figure needs: the
datasets in order, their sizes in the paper's orientation, the rows of one
configuration, a time cell, the unavailable datasets.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mbebench import paper
from mbebench.rows import (  # noqa: F401 - re-exported: the report's one entry to rows
    Config,
    by_config,
    config_key,
    configs,
    graph_meta,
    ordered_datasets,
    select,
    status_text,
)
from mbebench.rows import unavailable as unavailable_in

NOT_RUN = "not run"
SIMULATOR_NOTE = "simulator"
REF_ENGINE, REF_VARIANT = paper.REFERENCE["engine"], paper.REFERENCE["variant"]
WORKER_ENGINE, WORKER_PARAM = paper.WORKERS["engine"], paper.WORKERS["param"]


def by_dataset(rows: Iterable[Mapping]) -> dict[str, list[Mapping]]:
    out: dict[str, list[Mapping]] = {}
    for r in rows:
        out.setdefault(r["dataset"], []).append(r)
    return out


def unavailable(rows, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """dataset -> reason, from the rows and from the convert step's statuses."""
    out = unavailable_in(rows)
    out.update((ds, why) for ds, why in (extra or {}).items() if ds not in out)
    return out


# --------------------------------------------------------------------------- sizes


def csr_sizes(rows, meta: Mapping | None = None) -> dict[str, dict[str, int]]:
    """Sizes per dataset as the CSR holds them: the convert step's metadata (known even
    when no run succeeded), else the rows'."""
    out = graph_meta(rows)
    for ds, m in (meta or {}).items():
        out[ds] = {k: int(m[k]) for k in ("n_left", "n_right", "n_edges")}
    return out


def swapped(dataset: str, n_left: int | None, n_right: int | None) -> bool:
    """True when the CSR's left side is the paper's V side of one of its datasets.

    The conversion keeps KONECT's column order; the paper lists some graphs the
    other way round.  The side closer in size to the paper's |U| is U.
    """
    ref = paper.DATASETS.get(dataset)
    if ref is None or n_left is None or n_right is None:
        return False
    u, v, _ = ref
    return abs(n_left - v) + abs(n_right - u) < abs(n_left - u) + abs(n_right - v)


def sizes(rows, meta: Mapping | None = None) -> dict[str, dict[str, Any]]:
    """dataset -> {U, V, E, swapped}: |U| and |V| in the paper's orientation for the
    paper's datasets (``swapped``: the CSR's left side is V), the CSR's otherwise."""
    out = {}
    for ds, m in csr_sizes(rows, meta).items():
        sw = swapped(ds, m["n_left"], m["n_right"])
        u, v = (m["n_right"], m["n_left"]) if sw else (m["n_left"], m["n_right"])
        out[ds] = {"U": u, "V": v, "E": m["n_edges"], "swapped": sw}
    return out


def density(n_u, n_v, n_e) -> float:
    """The paper's edge density 2|E| / (|U| |V|) (its Section V-B; a complete graph has 2)."""
    try:
        if n_u and n_v:
            return 2.0 * float(n_e) / (float(n_u) * float(n_v))
    except TypeError:
        pass
    return math.nan


def side_of(row: Mapping, swapped_: bool) -> str | None:
    """The side (U or V, the table's orientation) an ok run enumerated from, as its
    engine reported it (``stats.side``: the CSR's left or right), or None."""
    side = (row.get("stats") or {}).get("side") if row.get("status") == "ok" else None
    if side not in ("left", "right"):
        return None
    return "U" if (side == "left") != swapped_ else "V"


# --------------------------------------------------------------------------- time cells


def simulated(row: Mapping | None) -> bool:
    return row is not None and bool(row.get("simulated")) and row.get("status") == "ok"


def shard_count(row: Mapping | None) -> int:
    """How many shards a row was gathered from (1: an ordinary run; mbebench.gather)."""
    sh = (row or {}).get("shards")
    n = sh.get("n") if isinstance(sh, Mapping) else None
    return int(n) if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1


def device_count(row: Mapping | None) -> int:
    """How many GPUs one run's time was measured on (cuMBE's ``devices``:
    ``stats.device_count``; 1: one device, or an engine without devices)."""
    n = ((row or {}).get("stats") or {}).get("device_count")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1


# A time that is not one run on one machine is marked wherever it is shown: a reader
# must not set a makespan over N machines, or a run on N GPUs, beside an ordinary time.
SHARDED_MARK = "†"
MULTI_GPU_MARK = "‡"


def time_marks(row: Mapping | None) -> str:
    """The marks of an ok row's time: sharded, on several GPUs, both or neither."""
    if row is None or row.get("status") != "ok":
        return ""
    return union_marks(SHARDED_MARK if shard_count(row) > 1 else "",
                       MULTI_GPU_MARK if device_count(row) > 1 else "")


def union_marks(*marks: str) -> str:
    """The marks in any of ``marks``, in one order (a ratio of two marked times)."""
    return "".join(m for m in (SHARDED_MARK, MULTI_GPU_MARK) if any(m in x for x in marks))


def marked(text: str, marks: str) -> str:
    return f"{text} {marks}" if marks and text not in ("", "–") else text


def mark_notes(marked_rows: Iterable[Mapping]) -> list[str]:
    """One footnote per mark the rows carry, naming what carries it."""
    sharded: dict[str, int] = {}
    multi: dict[str, int] = {}
    for r in marked_rows:
        if SHARDED_MARK in time_marks(r):
            sharded[r["dataset"]] = max(sharded.get(r["dataset"], 0), shard_count(r))
        if MULTI_GPU_MARK in time_marks(r):
            key = f"{r.get('label') or r['run_id']} on {r['dataset']}"
            multi[key] = max(multi.get(key, 0), device_count(r))
    out = []
    if sharded:
        out.append(f"{SHARDED_MARK} sharded: the slowest of N shards' times (their makespan "
                   "on N machines), not one machine's: "
                   + ", ".join(f"{ds} ({n} shards)" for ds, n in sharded.items()) + ".")
    if multi:
        out.append(f"{MULTI_GPU_MARK} one run on N GPUs of a node (its wall time), not one "
                   "GPU's: " + ", ".join(f"{k} ({n} GPUs)" for k, n in multi.items()) + ".")
    return out


def skipped_everywhere(cells: Mapping[str, Sequence[Mapping | None]]) -> dict[str, str]:
    """label -> reason, for the configurations whose every run is skipped for one and the
    same reason (datasets it was not to run on, and unavailable ones, aside): a column of
    identical cells says less than one line under the table."""
    out = {}
    for label, rows_ in cells.items():
        ran = [r for r in rows_ if r is not None and r.get("status") != "unavailable"]
        texts = {status_text(r) for r in ran}
        if ran and len(texts) == 1 and all(r.get("status") == "skipped" for r in ran):
            out[label] = texts.pop()
    return out


def median_s(row: Mapping | None) -> float | None:
    """Median algorithm seconds of an ok row, else None."""
    if row is None or row.get("status") != "ok" or not row.get("algo_s"):
        return None
    return float(statistics.median(float(x) for x in row["algo_s"]))


def is_time(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def geometric_mean(values: Iterable[float]) -> float:
    vals = [float(v) for v in values if is_time(v)]
    if not vals:
        return math.nan
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def spread(row: Mapping | None) -> tuple[float, float]:
    if row is None or row.get("status") != "ok" or simulated(row):
        return (math.nan, math.nan)
    algo = [float(x) for x in row.get("algo_s") or []]
    return (min(algo), max(algo))


def in_table_one(c: Config) -> bool:
    """Every engine's timed runs, but of the reference engine only its reference variant
    (the others are ablations: Fig. 7 and the summary show them)."""
    return c.timed and (c.engine != REF_ENGINE or c.variant == REF_VARIANT)


def in_table_order(rows: Sequence[Mapping], cands: Sequence[Mapping]) -> list[Mapping]:
    """Candidates in the tables' order, so that a sweep's pick does not depend on file order."""
    order = {c.key: i for i, c in enumerate(configs(rows))}
    return sorted(cands, key=lambda r: order[config_key(r)])


def instrumented(rows, ds: str, variant: str) -> list[Mapping]:
    """The reference engine's instrumented rows of one dataset and variant."""
    return in_table_order(rows, select(rows, dataset=ds, engine=REF_ENGINE, variant=variant,
                                       timed=False))


def reference_timed(rows, ds: str) -> Mapping | None:
    """The reference configuration's timed row of a dataset (the first in table order)."""
    cands = in_table_order(rows, select(rows, dataset=ds, engine=REF_ENGINE,
                                        variant=REF_VARIANT, timed=True))
    return next((r for r in cands if r.get("status") == "ok"), cands[0] if cands else None)


def pick(cands: Sequence[Mapping], usable) -> tuple[Mapping | None, Mapping | None]:
    """(the first ok row with usable data, the first row) of the candidates."""
    good = next((r for r in cands if r.get("status") == "ok" and usable(r) is not None), None)
    return good, (cands[0] if cands else None)


def worker_rows(rows, ds: str | None = None, *, timed: bool | None = None) -> list[Mapping]:
    """The worker-parallel CPU engine's rows (those with its worker-count parameter)."""
    return [r for r in in_table_order(rows, select(rows, dataset=ds, engine=WORKER_ENGINE,
                                                   timed=timed))
            if WORKER_PARAM in (r.get("params") or {})]


# --------------------------------------------------------------------------- texts

# an absolute path or file:// URL, not the path part of an http(s):// URL
_PATH = re.compile(r"(?<![\w:/.])(?:file://)?/[^\s'\"]+")


def without_paths(text: str) -> str:
    """A reason with every absolute path or ``file://`` URL cut to its file name: a
    figure or report is read on other machines."""
    return _PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1], text)
