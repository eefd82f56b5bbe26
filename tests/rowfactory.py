"""Result rows shaped like the ones mbebench.runner writes, for the tables/plots/rows tests.

Fields are given, never derived from a run id: ``imbea(ds)``, ``parmbe(ds, 4)``,
``cumbe(ds, "noWS", instr=True)`` fill engine, label, variant, params and
timed the way the run plan does for the shipped engines.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mbebench import paths


def make_row(
    dataset: str,
    engine: str,
    status: str = "ok",
    *,
    label: str,
    params: Mapping[str, Any] | None = None,
    variant: str | None = None,
    timed: bool = True,
    count: int | None = 10,
    fingerprint: str | None = "0x00000000000000ff",
    algo_s: Sequence[float] = (1.0,),
    graph: Mapping[str, int] | None = None,
    stats: Mapping[str, Any] | None = None,
    message: str | None = None,
    timeout_s: float = 3600.0,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Non-ok rows get no count, fingerprint, times or graph, as the runner writes them."""
    ok = status == "ok"
    algo = [float(x) for x in algo_s] if ok else []
    return {
        "schema_version": 2,
        "dataset": dataset,
        "run_id": run_id or label.replace(" ", "_").replace("=", ""),
        "engine": engine,
        "label": label,
        "variant": variant,
        "params": dict(params or {}),
        "timed": timed,
        "entry": f"{engine}:run",
        "command": None,
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
        "simulated": False,
        "host": {"hostname": "test", "cpu_count": 2, "python": "3.11"},
        "started_at": "2026-11-22T05:00:00+00:00",
        "finished_at": "2026-11-22T05:00:05+00:00",
    }


def imbea(dataset: str, status: str = "ok", **kw) -> dict[str, Any]:
    return make_row(dataset, "imbea", status, label="iMBEA", params={"side": "auto"}, **kw)


def parmbe(dataset: str, processes: int, status: str = "ok", **kw) -> dict[str, Any]:
    return make_row(dataset, "parmbe", status, label=f"ParMBE p={processes}",
                    params={"processes": processes, "side": "smaller"}, **kw)


def cumbe(dataset: str, variant: str = "cuMBE", status: str = "ok", *, instr: bool = False,
          k: int | None = None, rounds: bool | None = None, **kw) -> dict[str, Any]:
    label = " ".join(["cuMBE", *([variant] if variant != "cuMBE" else []),
                      *(["instr"] if instr else []), *([f"k={k}"] if k is not None else []),
                      *(["rounds"] if rounds else [])])
    params = {"variant": variant, "k": 24 if k is None else k, "threads": 128, "blocks": 0,
              "instrument": instr, "side": "auto", "device_memory_gib": None,
              **({"rounds": rounds} if rounds is not None else {})}
    return make_row(dataset, "cumbe", status, label=label, params=params, variant=variant,
                    timed=not instr, **kw)


def write_rows(folder: Path, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Write ``rows`` where the pipeline keeps them under ``folder``; their paths, in order."""
    written = []
    for r in rows:
        p = Path(folder) / paths.row(r["dataset"], r["run_id"])
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(r))
        written.append(str(p))
    return written
