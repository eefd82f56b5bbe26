"""What the pipeline will do, derived from the validated config.

Kept out of the Snakefile so it can be unit-tested: which datasets, where
each one comes from, and which engine runs (run ids) each dataset gets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

CUMBE_VARIANTS = ("cuMBE", "noRS", "noES", "noWS")


class ConfigError(ValueError):
    """The config names something that does not exist or cannot work."""


@dataclass(frozen=True)
class Source:
    kind: str  # "url" (an archive to download) or "path" (a local edge list)
    location: str
    sha256: str | None = None


@dataclass(frozen=True)
class RunSpec:
    run_id: str
    engine: str
    params: dict[str, Any] = field(default_factory=dict)
    threads: int = 1
    gpu: int = 0
    repeats: int = 1
    timeout_s: float = 3600.0
    simulate: bool = False
    require_gpu: bool = False
    # None: every dataset; else only these (e.g. keep the slow CUDA simulator to small graphs)
    datasets: tuple[str, ...] | None = None

    def applies_to(self, dataset: str) -> bool:
        return self.datasets is None or dataset in self.datasets


def konect_url(base_url: str, konect_name: str) -> str:
    base = base_url if base_url.endswith("/") else base_url + "/"
    return f"{base}download.tsv.{konect_name}.tar.bz2"


def selected_datasets(config: dict) -> list[str]:
    """Dataset names in config order, restricted to ``only`` when given."""
    names = list(config["datasets"])
    only = config.get("only") or []
    unknown = [n for n in only if n not in config["datasets"]]
    if unknown:
        raise ConfigError(
            f"'only' names unknown dataset(s): {', '.join(unknown)}"
            f" (known: {', '.join(names)})"
        )
    return [n for n in names if not only or n in only]


def dataset_source(config: dict, name: str) -> Source:
    try:
        entry = config["datasets"][name]
    except KeyError:
        raise ConfigError(f"unknown dataset {name!r}") from None
    if entry.get("path"):
        return Source("path", entry["path"], entry.get("sha256"))
    url = entry.get("url") or konect_url(config["konect"]["base_url"], entry["konect"])
    return Source("url", url, entry.get("sha256"))


def _engine_common(config: dict, engine: str) -> dict:
    engines = config["engines"]
    section = engines.get(engine) or {}
    only = section.get("datasets") or []
    unknown = [d for d in only if d not in config["datasets"]]
    if unknown:
        raise ConfigError(f"engines.{engine}.datasets names unknown dataset(s): {', '.join(unknown)}")
    return {
        "repeats": int(section.get("repeats", engines["repeats"])),
        "timeout_s": float(section.get("timeout_s", engines["timeout_s"])),
        "datasets": tuple(only) or None,
    }


def parmbe_processes(requested: list[int], cores: int) -> list[int]:
    """Process counts that fit the machine; the full core count if none does."""
    fitting = sorted({int(p) for p in requested if 1 <= int(p) <= cores})
    return fitting or [cores]


def plan_runs(config: dict, cores: int | None = None) -> dict[str, RunSpec]:
    """run_id -> RunSpec for every enabled engine run (see RunSpec.applies_to)."""
    cores = cores or os.cpu_count() or 1
    engines = config["engines"]
    runs: dict[str, RunSpec] = {}

    imbea = engines.get("imbea") or {}
    if imbea.get("enabled", True):
        runs["imbea"] = RunSpec("imbea", "imbea", {}, **_engine_common(config, "imbea"))

    parmbe = engines.get("parmbe") or {}
    if parmbe.get("enabled", True):
        for p in parmbe_processes(parmbe.get("processes", [cores]), cores):
            runs[f"parmbe-p{p}"] = RunSpec(
                f"parmbe-p{p}",
                "parmbe",
                {"processes": p},
                threads=p,
                **_engine_common(config, "parmbe"),
            )

    cumbe = engines.get("cumbe") or {}
    if cumbe.get("enabled", True):
        common = _engine_common(config, "cumbe")
        base = {
            "k": int(cumbe.get("k", 2)),
            "threads": int(cumbe.get("threads", 512)),
            "blocks": int(cumbe.get("blocks", 0)),
        }
        for variant in cumbe.get("variants", list(CUMBE_VARIANTS)):
            if variant not in CUMBE_VARIANTS:
                raise ConfigError(
                    f"unknown cuMBE variant {variant!r} (known: {', '.join(CUMBE_VARIANTS)})"
                )
            builds = [False, True] if cumbe.get("instrument", True) else [False]
            for instrument in builds:
                run_id = f"cumbe-{variant}" + ("-instr" if instrument else "")
                runs[run_id] = RunSpec(
                    run_id,
                    "cumbe",
                    {**base, "variant": variant, "instrument": instrument},
                    gpu=1,
                    simulate=bool(cumbe.get("simulate", False)),
                    require_gpu=bool(cumbe.get("require_gpu", False)),
                    # an instrumented build is for plots, one run is enough
                    **{**common, "repeats": 1 if instrument else common["repeats"]},
                )
    if not runs:
        raise ConfigError("no engine is enabled in the config's 'engines' section")
    return runs


def planned_rows(datasets: list[str], runs: dict[str, RunSpec]) -> list[str]:
    """The result-row paths the aggregate step waits for."""
    return [
        f"results/runs/{d}/{run_id}.json"
        for d in datasets
        for run_id, spec in runs.items()
        if spec.applies_to(d)
    ]
