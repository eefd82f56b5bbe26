"""Load, validate, select and flatten result rows (``results/runs/<dataset>/<run_id>.json``).

The row format is defined in ``docs/architecture.md``.  Everything downstream
(tables, plots) goes through :func:`load_rows`, so a malformed or truncated
file is reported once, naming the file, instead of surfacing as a confusing
``KeyError`` inside a plot.

Rows are selected by what they hold (:func:`select`: dataset, engine, variant,
params, timed), never by their run id, which is only a file name.  A
*configuration* is one engine with one set of parameters (:func:`configs`):
the summary table has a column per configuration.
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from mbebench import row_schema
from mbebench.row_schema import REQUIRED_KEYS, STATUSES  # noqa: F401  (re-exported)

_SHARD_FILES = re.compile(r"^(shard|job)-\d+-of-\d+\.json$")


# --------------------------------------------------------------------------- validation


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def validate_row(row: Any, source: str = "<row>") -> dict:
    """Return ``row`` if it is a well-formed result row, else raise ValueError naming ``source``."""
    return upgrade(dict(row_schema.check(row, source)))


def upgrade(row: dict) -> dict:
    """A schema_version 1 row in today's shape (rows written by earlier versions).

    Version 1 had no ``label`` (now made by the engine's spec, else the run id)
    and no ``timed``: an instrumented build was a row whose params had
    ``instrument: true``.
    """
    if row.get("schema_version", 1) < 2:
        row.setdefault("params", {})
        spec = _spec_of(row["engine"])
        label = spec.names(row["engine"], [row["params"]])[0][1] if spec else row["run_id"]
        row.setdefault("label", label)
        row.setdefault("timed", not bool(row["params"].get("instrument")))
    return row


def _spec_of(engine: str):
    """The registered spec of an engine, or None (a plug-in, or an engine since removed)."""
    from mbebench import engine as registry

    if engine not in registry.ENGINES:
        return None
    try:
        return registry.get_spec(engine)
    except (ImportError, ValueError, TypeError):
        return None


def _expand(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[Path]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            # a sharded run's shard rows and job receipts (mbebench.gather) are in its row
            out.extend(q for q in sorted(p.rglob("*.json")) if not _SHARD_FILES.match(q.name))
        else:
            out.append(p)
    return out


def load_rows(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[dict]:
    """Read and validate result-row files (a directory is searched for ``*.json``).

    Raises ValueError naming the file for unreadable JSON, a malformed row, or
    two files holding the same (dataset, run_id) or the same dataset, engine and
    parameters.
    """
    rows: list[dict] = []
    seen: dict[tuple[str, str], Path] = {}
    same: dict[tuple[str, tuple[str, str]], Path] = {}
    for path in _expand(paths):
        try:
            row = upgrade(row_schema.read_row_file(path))
        except FileNotFoundError:
            raise ValueError(f"{path}: result row file not found") from None
        key = (row["dataset"], row["run_id"])
        if key in seen:
            raise ValueError(
                f"{path}: duplicate result row for dataset {key[0]!r} run {key[1]!r}"
                f" (also in {seen[key]})"
            )
        seen[key] = path
        cfg = (row["dataset"], config_key(row))
        if cfg in same:
            raise ValueError(
                f"{path}: a second row for dataset {row['dataset']!r} with the same engine and "
                f"parameters as {same[cfg]} (rows of two run plans? keep one)"
            )
        same[cfg] = path
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
    # the reason is the dataset's, the same for every run: the tables list it once
    return str(status)


def unavailable(rows: Iterable[Mapping]) -> dict[str, str]:
    """dataset -> why it is unavailable (the message of its first ``unavailable`` row)."""
    out: dict[str, str] = {}
    for r in rows:
        if r.get("status") == "unavailable" and r["dataset"] not in out:
            out[r["dataset"]] = " ".join((r.get("message") or "unavailable").split())
    return out


def graph_meta(rows: Iterable[Mapping]) -> dict[str, dict[str, int]]:
    """dataset -> {n_left, n_right, n_edges}, from the first row that carries a graph."""
    meta: dict[str, dict[str, int]] = {}
    for r in rows:
        g = r.get("graph")
        if g and r["dataset"] not in meta:
            meta[r["dataset"]] = {k: int(g[k]) for k in ("n_left", "n_right", "n_edges")}
    return meta


@dataclass(frozen=True)
class Config:
    """One engine with one set of parameters: a column of the summary table."""

    key: tuple[str, str]  # (engine, params as canonical JSON)
    engine: str
    label: str
    variant: str | None
    params: Mapping[str, Any]
    timed: bool


def config_key(row: Mapping) -> tuple[str, str]:
    return (row["engine"], json.dumps(row.get("params") or {}, sort_keys=True))


def configs(rows: Iterable[Mapping]) -> list[Config]:
    """The configurations the rows hold, in an order that does not depend on the order of
    the row files: timed ones first; registered engines in registry order, then the others
    as they come; within an engine by parameter value (a choice by its place in the spec)."""
    from mbebench import engine as registry

    seen: dict[tuple[str, str], Config] = {}
    for r in rows:
        key = config_key(r)
        if key not in seen:
            seen[key] = Config(key, r["engine"], r.get("label") or r["run_id"], r.get("variant"),
                               dict(r.get("params") or {}), bool(r.get("timed", True)))
    engines = list(registry.ENGINES)
    engines += [e for e in dict.fromkeys(c.engine for c in seen.values()) if e not in engines]
    ordered = sorted(seen.values(), key=lambda c: (not c.timed, engines.index(c.engine),
                                                   _params_key(c)))
    labels = [c.label for c in ordered]
    # labels are unique within one plan; rows of two plans may repeat one
    return [c if labels.count(c.label) == 1 else
            Config(c.key, c.engine, f"{c.label} {_short_params(c.params)}", c.variant, c.params,
                   c.timed) for c in ordered]


def _params_key(c: Config) -> tuple:
    spec = _spec_of(c.engine)
    names = [p.name for p in spec.params] if spec else []
    names += [k for k in c.params if k not in names]
    out = []
    for name in names:
        v = c.params.get(name)
        choices = spec.param(name).choices if spec and name in spec.defaults() else ()
        if v in choices:
            out.append((3, choices.index(v), ""))
        elif v is None:
            out.append((0, 0, ""))
        elif isinstance(v, bool):
            out.append((1, int(v), ""))
        elif isinstance(v, (int, float)):
            out.append((2, v, ""))
        else:
            out.append((4, 0, json.dumps(v, sort_keys=True)))
    return tuple(out)


def _short_params(params: Mapping) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"


def select(rows: Iterable[Mapping], *, dataset: str | None = None, engine: str | None = None,
           variant: str | None = None, timed: bool | None = None, ok: bool = False,
           params: Mapping[str, Any] | None = None) -> list[Mapping]:
    """The rows whose fields match every given value (``params``: those keys only)."""
    out = []
    for r in rows:
        p = r.get("params") or {}
        if ((dataset is None or r["dataset"] == dataset)
                and (engine is None or r["engine"] == engine)
                and (variant is None or r.get("variant") == variant)
                and (timed is None or bool(r.get("timed", True)) == timed)
                and (not ok or r.get("status") == "ok")
                and all(k in p and p[k] == v for k, v in (params or {}).items())):
            out.append(r)
    return out


def by_config(rows: Iterable[Mapping]) -> dict[tuple[str, tuple[str, str]], Mapping]:
    """(dataset, config key) -> row."""
    return {(r["dataset"], config_key(r)): r for r in rows}


FRAME_COLUMNS = [
    "dataset", "run_id", "engine", "label", "variant", "timed", "status", "status_text",
    "message", "count", "fingerprint", "repeats", "algo_median", "algo_min", "algo_max",
    "wall_median", "compile_s", "peak_rss_bytes", "timeout_s", "n_left", "n_right", "n_edges",
    "source",
]


def rows_frame(rows: Iterable[Mapping]) -> pd.DataFrame:
    """One DataFrame row per run: what ran, status, count, time summary (median/min/max),
    and a ``params.<name>`` column per parameter any row has."""
    recs = []
    for r in rows:
        algo = [float(x) for x in (r.get("algo_s") or [])]
        wall = [float(x) for x in (r.get("wall_s") or [])]
        g = r.get("graph") or {}
        ok = r.get("status") == "ok"
        rec = {
            "dataset": r["dataset"],
            "run_id": r["run_id"],
            "engine": r.get("engine"),
            "label": r.get("label") or r["run_id"],
            "variant": r.get("variant"),
            "timed": bool(r.get("timed", True)),
            "status": r.get("status"),
            "status_text": "ok" if ok else status_text(r),
            "message": r.get("message"),
            "count": r.get("count") if ok else None,
            "fingerprint": str(r["fingerprint"]).lower() if ok and r.get("fingerprint") else None,
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
        rec.update({f"params.{k}": v for k, v in (r.get("params") or {}).items()})
        recs.append(rec)
    extra = sorted({k for rec in recs for k in rec} - set(FRAME_COLUMNS))
    df = pd.DataFrame.from_records(recs, columns=FRAME_COLUMNS + extra)
    for col in ("count", "repeats", "n_left", "n_right", "n_edges"):
        df[col] = df[col].astype("Int64")
    for col in ("algo_median", "algo_min", "algo_max", "wall_median"):
        df[col] = df[col].astype("float64")
    return df


def ordered_datasets(rows: Iterable[Mapping], datasets: Iterable[str]) -> list[str]:
    """The given order, then any dataset that only the rows name (sorted), so nothing is dropped."""
    order = list(dict.fromkeys(datasets))
    extra = sorted({r["dataset"] for r in rows} - set(order))
    return order + extra
