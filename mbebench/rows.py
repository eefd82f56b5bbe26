"""Load, validate and flatten result rows (``results/runs/<dataset>/<run_id>.json``).

The row format is defined in ``docs/architecture.md``.  Everything downstream
(tables, plots) goes through :func:`load_rows` / :func:`rows_frame`, so a
malformed or truncated file is reported once, naming the file, instead of
surfacing as a confusing ``KeyError`` inside a plot.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

STATUSES = ("ok", "timeout", "error", "skipped")
REQUIRED_KEYS = ("dataset", "run_id", "engine", "status")
_FP_RE = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
_PARMBE_RE = re.compile(r"^parmbe-p(\d+)$")
_CUMBE_RE = re.compile(r"^cumbe-(.+?)(-instr)?$")
INSTR_SUFFIX = "-instr"


# --------------------------------------------------------------------------- run ids


def is_instrumented(run_id: str) -> bool:
    """Instrumented runs count for agreement; their times are not "the" engine time."""
    return run_id.endswith(INSTR_SUFFIX)


def parmbe_processes(run_id: str) -> int | None:
    """``parmbe-p8`` -> 8; anything else -> None."""
    m = _PARMBE_RE.match(run_id)
    return int(m.group(1)) if m else None


def cumbe_variant(run_id: str) -> str | None:
    """``cumbe-noWS`` / ``cumbe-noWS-instr`` -> ``noWS``; anything else -> None."""
    m = _CUMBE_RE.match(run_id)
    return m.group(1) if m else None


def run_id_sort_key(run_id: str) -> tuple:
    """imbea, parmbe-p1 < p2 < ... (numeric), cumbe-cuMBE, other cumbe variants; -instr last."""
    CUMBE_VARIANTS = ("cuMBE", "noRS", "noES", "noWS")  # the paper's variant order

    instr = is_instrumented(run_id)
    if run_id == "imbea":
        return (instr, 0, 0, run_id)
    p = parmbe_processes(run_id)
    if p is not None:
        return (instr, 1, p, run_id)
    v = cumbe_variant(run_id)
    if v is not None:
        rank = CUMBE_VARIANTS.index(v) if v in CUMBE_VARIANTS else len(CUMBE_VARIANTS)
        return (instr, 2, rank, run_id)
    return (instr, 3, 0, run_id)


# --------------------------------------------------------------------------- validation


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def validate_row(row: Any, source: str = "<row>") -> dict:
    """Return ``row`` if it is a well-formed result row, else raise ValueError naming ``source``."""
    if not isinstance(row, Mapping):
        raise ValueError(f"{source}: result row must be a JSON object, got {type(row).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in row]
    if missing:
        raise ValueError(f"{source}: result row lacks key(s) {', '.join(missing)}")
    for k in ("dataset", "run_id", "engine"):
        if not isinstance(row[k], str) or not row[k]:
            raise ValueError(f"{source}: {k!r} must be a non-empty string, got {row[k]!r}")
    status = row["status"]
    if status not in STATUSES:
        raise ValueError(
            f"{source}: status {status!r} is not one of {', '.join(STATUSES)}"
        )
    algo = row.get("algo_s") or []
    if not isinstance(algo, list) or not all(_is_num(x) for x in algo):
        raise ValueError(f"{source}: 'algo_s' must be a list of numbers, got {algo!r}")
    if status == "ok":
        if not _is_int(row.get("count")) or row["count"] < 0:
            raise ValueError(
                f"{source}: ok row needs an int 'count' >= 0, got {row.get('count')!r}"
            )
        fp = row.get("fingerprint")
        if not isinstance(fp, str) or not _FP_RE.match(fp):
            raise ValueError(f"{source}: ok row needs a hex 'fingerprint' (0x...), got {fp!r}")
        if not algo:
            raise ValueError(f"{source}: ok row has no 'algo_s' times")
    graph = row.get("graph")
    if graph is not None:
        if not isinstance(graph, Mapping) or not all(
            _is_int(graph.get(k)) and graph[k] >= 0 for k in ("n_left", "n_right", "n_edges")
        ):
            raise ValueError(
                f"{source}: 'graph' must hold int n_left, n_right, n_edges, got {graph!r}"
            )
    stats = row.get("stats")
    if stats is not None and not isinstance(stats, Mapping):
        raise ValueError(f"{source}: 'stats' must be an object, got {type(stats).__name__}")
    return dict(row)


def _expand(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(p.rglob("*.json")))
        else:
            out.append(p)
    return out


def load_rows(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[dict]:
    """Read and validate result-row files (a directory is searched for ``*.json``).

    Raises ValueError naming the file for unreadable JSON, a malformed row, or
    two files holding the same (dataset, run_id).
    """
    rows: list[dict] = []
    seen: dict[tuple[str, str], Path] = {}
    for path in _expand(paths):
        try:
            obj = json.loads(path.read_text())
        except FileNotFoundError:
            raise ValueError(f"{path}: result row file not found") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: not a readable JSON result row ({e})") from None
        row = validate_row(obj, str(path))
        key = (row["dataset"], row["run_id"])
        if key in seen:
            raise ValueError(
                f"{path}: duplicate result row for dataset {key[0]!r} run {key[1]!r}"
                f" (also in {seen[key]})"
            )
        seen[key] = path
        row["_source"] = str(path)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- flattening


def status_text(row: Mapping) -> str:
    """What a table cell says instead of a time for a non-ok row."""
    status = row.get("status")
    msg = (row.get("message") or "").strip().splitlines()
    msg = msg[0] if msg else ""
    if status == "timeout":
        t = row.get("timeout_s")
        return f"timeout ({t:g} s)" if _is_num(t) else "timeout"
    if status == "skipped":
        return f"skipped: {msg}" if msg else "skipped"
    if status == "error":
        return f"error: {msg}" if msg else "error"
    return str(status)


def graph_meta(rows: Iterable[Mapping]) -> dict[str, dict[str, int]]:
    """dataset -> {n_left, n_right, n_edges}, from the first row that carries a graph."""
    meta: dict[str, dict[str, int]] = {}
    for r in rows:
        g = r.get("graph")
        if g and r["dataset"] not in meta:
            meta[r["dataset"]] = {k: int(g[k]) for k in ("n_left", "n_right", "n_edges")}
    return meta


FRAME_COLUMNS = [
    "dataset", "run_id", "engine", "variant", "processes", "instrumented", "status",
    "status_text", "message", "count", "fingerprint", "repeats", "algo_median", "algo_min",
    "algo_max", "wall_median", "compile_s", "peak_rss_bytes", "timeout_s", "n_left",
    "n_right", "n_edges", "source",
]


def rows_frame(rows: Iterable[Mapping]) -> pd.DataFrame:
    """One DataFrame row per run: ids, status, count, time summary (median/min/max)."""
    recs = []
    for r in rows:
        algo = [float(x) for x in (r.get("algo_s") or [])]
        wall = [float(x) for x in (r.get("wall_s") or [])]
        g = r.get("graph") or {}
        ok = r.get("status") == "ok"
        recs.append(
            {
                "dataset": r["dataset"],
                "run_id": r["run_id"],
                "engine": r.get("engine"),
                "variant": r.get("variant") or cumbe_variant(r["run_id"]),
                "processes": parmbe_processes(r["run_id"]),
                "instrumented": is_instrumented(r["run_id"]),
                "status": r.get("status"),
                "status_text": "ok" if ok else status_text(r),
                "message": r.get("message"),
                "count": r.get("count") if ok else None,
                "fingerprint": str(r.get("fingerprint")).lower() if ok else None,
                "repeats": len(algo),
                "algo_median": statistics.median(algo) if ok and algo else None,
                "algo_min": min(algo) if ok and algo else None,
                "algo_max": max(algo) if ok and algo else None,
                "wall_median": statistics.median(wall) if ok and wall else None,
                "compile_s": r.get("compile_s"),
                "peak_rss_bytes": r.get("peak_rss_bytes"),
                "timeout_s": r.get("timeout_s"),
                "n_left": g.get("n_left"),
                "n_right": g.get("n_right"),
                "n_edges": g.get("n_edges"),
                "source": r.get("_source"),
            }
        )
    df = pd.DataFrame.from_records(recs, columns=FRAME_COLUMNS)
    for col in ("count", "processes", "repeats", "n_left", "n_right", "n_edges"):
        df[col] = df[col].astype("Int64")
    for col in ("algo_median", "algo_min", "algo_max", "wall_median"):
        df[col] = df[col].astype("float64")
    return df


def index_rows(rows: Iterable[Mapping]) -> dict[tuple[str, str], Mapping]:
    """(dataset, run_id) -> row."""
    return {(r["dataset"], r["run_id"]): r for r in rows}


def ordered_datasets(rows: Iterable[Mapping], datasets: Iterable[str]) -> list[str]:
    """The given order, then any dataset that only the rows name (sorted), so nothing is dropped."""
    order = list(dict.fromkeys(datasets))
    extra = sorted({r["dataset"] for r in rows} - set(order))
    return order + extra


def make_row(
    dataset: str,
    run_id: str,
    status: str = "ok",
    *,
    count: int | None = 10,
    fingerprint: str | None = "0x00000000000000ff",
    algo_s: Sequence[float] = (1.0,),
    graph: Mapping[str, int] | None = None,
    stats: Mapping[str, Any] | None = None,
    message: str | None = None,
    timeout_s: float = 3600.0,
) -> dict[str, Any]:
    """A schema-shaped result row (as mbebench.runner writes it), for tests and demos.

    Non-ok rows get no count, fingerprint, times or graph, as the runner writes them.
    """
    engine = "imbea" if run_id == "imbea" else run_id.split("-")[0]
    ok = status == "ok"
    algo = [float(x) for x in algo_s] if ok else []
    params: dict[str, Any] = {}
    if (p := parmbe_processes(run_id)) is not None:
        params["processes"] = p
    if (v := cumbe_variant(run_id)) is not None:
        params.update(variant=v, instrument=is_instrumented(run_id))
    return {
        "schema_version": 1,
        "dataset": dataset,
        "run_id": run_id,
        "engine": engine,
        "variant": params.get("variant"),
        "params": params,
        "status": status,
        "message": None if ok else (message or status),
        "count": count if ok else None,
        "fingerprint": fingerprint if ok else None,
        "algo_s": algo,
        "wall_s": [x + 0.1 for x in algo],
        "algo_s_median": statistics.median(algo) if algo else None,
        "compile_s": 0.5 if ok else None,
        "peak_rss_bytes": 1 << 20 if ok else None,
        "graph": dict(graph or {"n_left": 10, "n_right": 20, "n_edges": 30}) if ok else None,
        "stats": dict(stats or {}) if ok else {},
        "repeats": len(algo) or 1,
        "timeout_s": timeout_s,
        "host": {"hostname": "test", "cpu_count": 2, "python": "3.11"},
        "started_at": "2026-11-22T05:00:00+00:00",
        "finished_at": "2026-11-22T05:00:05+00:00",
    }
