"""What the pipeline will do, derived from the validated config.

Kept out of the Snakefile so it can be unit-tested: which datasets, where
each one comes from, and which engine runs each dataset gets.  Engine runs come
from the engines' specs (:mod:`mbebench.spec`) with no per-engine code here:
every registered engine (:data:`mbebench.engine.ENGINES`) and every plug-in
entry of the config's ``engines`` section (:mod:`mbebench.plugins`) gives the
product of its parameters' values, one run each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mbebench import engine as registry
from mbebench import paths
from mbebench.download import konect_url
from mbebench.dataset_status import archive_name
from mbebench.plugins import is_plugin, plugin_spec
from mbebench.spec import ConfigError, EngineSpec

__all__ = ["ConfigError", "RunSpec", "Sharding", "Source", "plan_runs", "planned_rows",
           "direct_run", "dataset_shards"]

GLOBAL_KEYS = ("repeats", "timeout_s")


@dataclass(frozen=True)
class Source:
    kind: str  # "url" (an archive to download) or "path" (a local edge list)
    location: str
    sha256: str | None = None

    @property
    def name(self) -> str:
        """What is fetched, apart from where: the file name of the URL or path (KONECT's
        ``download.tsv.<name>.tar.bz2``).  A mirror holds the same files under the same names,
        so this, not the location, decides whether a finished download is still the one
        the config asks for."""
        return archive_name(self.location)


@dataclass(frozen=True)
class RunSpec:
    """One engine run (on each dataset it applies to).

    ``run_id`` is only a file name (``results/runs/<dataset>/<run_id>.json``):
    stable for a given config, never parsed.  What a run is lives in its fields,
    which the row repeats: ``engine``, ``variant``, ``params`` (all of them),
    ``label`` (the tables' name for it), ``timed``.
    """

    run_id: str
    engine: str
    label: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    entry: str | None = None  # "module:function" of a Python engine
    command: tuple[str, ...] | None = None  # argv template of a command-line engine
    input: str = "csr"  # the graph file the engine reads: csr, konect or adj
    variant: str | None = None
    timed: bool = True  # False: a measurement probe (instrumented build)
    threads: int = 1  # CPUs (Snakemake threads) of the run
    gpu: int = 0
    repeats: int = 1
    timeout_s: float = 3600.0
    env: dict[str, str] = field(default_factory=dict)  # e.g. the CUDA simulator's switch
    require_gpu: bool = False
    # None: every dataset; else only these (e.g. keep the slow CUDA simulator to small graphs)
    datasets: tuple[str, ...] | None = None

    def applies_to(self, dataset: str) -> bool:
        return self.datasets is None or dataset in self.datasets

    @property
    def simulate(self) -> bool:
        return bool(self.env)

    def job(self) -> dict[str, Any]:
        """What the runner needs (``python -m mbebench run --job <json>``)."""
        return {
            "engine": self.engine, "label": self.label or self.run_id, "params": self.params,
            "entry": self.entry, "command": list(self.command) if self.command else None,
            "input": self.input, "variant": self.variant, "timed": self.timed,
            "repeats": self.repeats, "timeout_s": self.timeout_s, "env": self.env,
            "require_gpu": self.require_gpu,
        }


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


def graph_file(dataset: str, fmt: str = "csr") -> str:
    """The pipeline's graph file of a dataset: the CSR, or a text export of it."""
    return paths.graph_file(dataset, fmt)


def engine_names(config: dict) -> list[str]:
    """Registered engines first (in registry order), then the config's plug-ins."""
    sections = [k for k in (config.get("engines") or {}) if k not in GLOBAL_KEYS]
    return [*registry.ENGINES, *[k for k in sections if k not in registry.ENGINES]]


def engine_spec(name: str, section: Mapping) -> tuple[EngineSpec, dict, dict]:
    """(spec, run options, parameter values) of one config section; ConfigError naming the key."""
    where = f"engines.{name}"
    if is_plugin(section):
        if name in registry.ENGINES:
            raise ConfigError(f"{where}: {name!r} is a registered engine; give yours another name")
        spec = plugin_spec(name, section, where)
        options = {k: v for k, v in section.items() if k in spec.run_options()}
        values = dict(section.get("params") or {})
        known = {p.name for p in spec.params}
        for key in values:
            if key not in known and not spec.open_params:
                raise ConfigError(f"{where}.params: unknown parameter {key!r} of {spec.entry} "
                                  f"(known: {', '.join(sorted(known)) or 'none'})")
        return spec, options, values
    if name not in registry.ENGINES:
        raise ConfigError(
            f"{where}: unknown engine {name!r} (registered: {', '.join(registry.ENGINES)}; "
            "your own engine needs module: or command:)"
        )
    spec = registry.get_spec(name)
    checked = spec.check_section(section, where)
    options = {k: v for k, v in checked.items() if k in spec.run_options()}
    return spec, options, {k: v for k, v in checked.items() if k not in options}


def _common(config: dict, name: str, options: Mapping) -> dict:
    engines = config["engines"]
    only = options.get("datasets") or []
    unknown = [d for d in only if d not in config["datasets"]]
    if unknown:
        raise ConfigError(f"engines.{name}.datasets names unknown dataset(s): {', '.join(unknown)}")
    return {
        "repeats": int(options.get("repeats", engines["repeats"])),
        "timeout_s": float(options.get("timeout_s", engines["timeout_s"])),
        "datasets": tuple(only) or None,
    }


def engine_runs(config: dict, name: str, cores: int) -> list[RunSpec]:
    """The runs of one engine: its parameter grid, or none when it is disabled."""
    section = (config.get("engines") or {}).get(name) or {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"engines.{name}: must be a mapping, got {section!r}")
    default = registry.get_spec(name).enabled if name in registry.ENGINES else True
    if not section.get("enabled", default):
        return []
    spec, options, values = engine_spec(name, section)
    common = _common(config, name, options)
    grid = spec.grid(values, f"engines.{name}", cores)
    runs = []
    for params, (run_id, label) in zip(grid, spec.names(name, grid)):
        timed = spec.timed(params)
        runs.append(RunSpec(
            run_id, name, label, params, entry=spec.entry, command=spec.command,
            input=spec.input, variant=spec.variant_of(params), timed=timed,
            threads=spec.cpus_for(params), gpu=spec.gpus_for(params, f"engines.{name}"),
            # a probe is for plots and the agreement check: one run is enough
            repeats=common["repeats"] if timed else 1, timeout_s=common["timeout_s"],
            env=dict(spec.simulator_env or {}) if options.get("simulate") else {},
            require_gpu=bool(options.get("require_gpu", False)), datasets=common["datasets"],
        ))
    return runs


def prefer_overrides(config: dict, base: Mapping | None) -> None:
    """Let an override file use a parameter's old name (``variants``) where the workflow's own
    config file (``base``, the Snakefile's ``configfile:``) sets the new one (``variant``).

    Snakemake merges an override into the config file, so the section ends up with both
    names; the one only the override gives is the user's, and the other is dropped here.
    Both in one file (or both in the overrides) stays an error (EngineSpec.check_section)."""
    engines = config.get("engines")
    base_engines = (base or {}).get("engines") if isinstance(base, Mapping) else None
    if not isinstance(engines, dict) or not isinstance(base_engines, Mapping):
        return
    for name, section in engines.items():
        base_section = base_engines.get(name)
        if name not in registry.ENGINES or not isinstance(section, dict) \
                or not isinstance(base_section, Mapping):
            continue
        for p in registry.get_spec(name).params:
            for alias in p.aliases:
                if (alias in section and p.name in section and p.name in base_section
                        and alias not in base_section and section[p.name] == base_section[p.name]):
                    del section[p.name]


def machine_cores(declared: int | None = None) -> int:
    """The core count the plan fits process counts to (``Param.fit_cores``): ``declared``
    when given (under a cluster executor, the profile's ``cores``: one compute node's), else
    the CPUs this process may run on, never Snakemake's ``--cores`` of a local run, which
    limits only how many jobs run at once (docs/plan.md)."""
    if declared:
        return int(declared)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def dropped_runs(config: dict, cores: int, where: str = "this machine's") -> list[str]:
    """A line for each engine parameter whose values above ``cores`` the plan left out
    (:func:`~mbebench.spec.fit_cores`), saying which and why: the closing summary shows it,
    so that a column missing from the tables is never a silent one."""
    from mbebench.spec import Param, fit_cores

    lines = []
    for name in engine_names(config):
        section = (config.get("engines") or {}).get(name) or {}
        if not isinstance(section, Mapping) or not section.get("enabled", True):
            continue
        spec, _, values = engine_spec(name, section)
        for p in spec.params:
            if not p.fit_cores:
                continue
            asked = sorted({int(v) for v in Param.sweep(values.get(p.name, p.default))})
            kept = fit_cores(asked, cores)
            gone = [v for v in asked if v not in kept]
            if not gone:
                continue
            instead = [v for v in kept if v not in asked]
            lines.append(
                f"dropped: {spec.label} {', '.join(f'{p.abbrev}={v}' for v in gone)} "
                f"(engines.{name}.{p.name} above {where} {cores} cores; docs/plan.md)"
                + (f"; {p.abbrev}={instead[0]} runs instead" if instead else ""))
    return lines


def plan_runs(config: dict, cores: int | None = None) -> dict[str, RunSpec]:
    """run_id -> RunSpec for every enabled engine run (see RunSpec.applies_to); process
    counts are fitted to ``cores`` (default: :func:`machine_cores`)."""
    cores = cores or machine_cores()
    runs: dict[str, RunSpec] = {}
    labels: dict[str, str] = {}
    for name in engine_names(config):
        for run in engine_runs(config, name, cores):
            for key, seen, what in ((run.run_id, runs, "run id"), (run.label, labels, "label")):
                if key in seen:
                    other = seen[key] if isinstance(seen[key], str) else seen[key].engine
                    raise ConfigError(f"engines.{name}: {what} {key!r} is also one of "
                                      f"engines.{other}'s runs; rename the engine")
            runs[run.run_id] = run
            labels[run.label] = name
    if not runs:
        raise ConfigError("no engine is enabled in the config's 'engines' section")
    return runs


def direct_run(engine: str, params: Mapping[str, Any], run_id: str, *, repeats: int = 1,
               timeout_s: float = 3600.0, simulate: bool = False,
               require_gpu: bool = False) -> RunSpec:
    """One run given by hand (``python -m mbebench run --engine ...``): a registered
    engine gets its spec's defaults and checks; a ``module:function`` runs as given."""
    common = {"repeats": repeats, "timeout_s": timeout_s, "require_gpu": require_gpu}
    if engine not in registry.ENGINES:
        if simulate:
            raise ConfigError(f"{engine}: only a registered engine knows its simulator; "
                              "set the simulator's environment yourself")
        return RunSpec(run_id, engine, run_id, dict(params), **common)
    spec = registry.get_spec(engine)
    full = spec.resolve(params, f"engine {engine}")
    if simulate and not spec.simulator_env:
        raise ConfigError(f"engine {engine} has no simulator")
    label = spec.names(engine, [full])[0][1]
    return RunSpec(run_id, engine, label, full, entry=spec.entry, command=spec.command,
                   input=spec.input, variant=spec.variant_of(full), timed=spec.timed(full),
                   env=dict(spec.simulator_env or {}) if simulate else {}, **common)


def reporting(argv: list[str]) -> bool:
    """Whether Snakemake was started to write a report (``--report [FILE]``)."""
    return any(a == "--report" or a.startswith("--report=") for a in argv)


def on_disk(items: list[str], pattern: str = "{}") -> list[str]:
    """The items whose file (``pattern`` filled with the item) exists."""
    return [x for x in items if os.path.exists(pattern.format(x))]


def planned_rows(datasets: list[str], runs: dict[str, RunSpec]) -> list[str]:
    """The result-row paths the aggregate step waits for."""
    return [
        paths.row(d, run_id)
        for d in datasets
        for run_id, spec in runs.items()
        if spec.applies_to(d)
    ]


# --------------------------------------------------------------------------- shards


@dataclass(frozen=True)
class Sharding:
    """How a dataset's engine runs are scattered (``datasets.<d>.shards`` and
    ``shards_per_job``; :mod:`mbebench.gather`): ``n`` shards, ``per_job`` of them to
    one job (one process, one SLURM job).  ``n == 1``: the run is one ordinary job."""

    n: int = 1
    per_job: int = 1

    @property
    def sharded(self) -> bool:
        return self.n > 1

    def groups(self) -> list[list[int]]:
        """The shards of each job."""
        from mbebench.gather import groups

        return groups(self.n, self.per_job)


def dataset_shards(config: dict, datasets: list[str]) -> dict[str, Sharding]:
    """dataset -> its Sharding (the schema has checked the values' types)."""
    out = {}
    for ds in datasets:
        entry = config["datasets"][ds]
        n = int(entry.get("shards", 1))
        per_job = int(entry.get("shards_per_job", 1))
        out[ds] = Sharding(n, max(1, min(per_job, n)))
    return out


def check_shards(shards: Mapping[str, Sharding], runs: Mapping[str, RunSpec]) -> None:
    """Every run of a sharded dataset must take the ``shard`` parameter and leave it to the
    pipeline: ConfigError naming the dataset and the engine otherwise."""
    for ds, sh in shards.items():
        if not sh.sharded:
            continue
        for run in runs.values():
            if not run.applies_to(ds):
                continue
            where = f"datasets.{ds}.shards: {sh.n}"
            if "shard" not in run.params:
                raise ConfigError(
                    f"{where}, but engines.{run.engine} takes no 'shard' parameter (run "
                    f"{run.run_id}); give it one, or leave {ds} out of "
                    f"engines.{run.engine}.datasets")
            if run.params["shard"] != "0/1":
                raise ConfigError(
                    f"{where}, and engines.{run.engine}.shard is set by hand "
                    f"({run.params['shard']!r}, run {run.run_id}); the pipeline sets each "
                    "shard: leave shard out of the engine's section")


def shard_folder(dataset: str, run_id: str) -> str:
    """Where a sharded run's shard rows and job receipts live."""
    return paths.run_folder(dataset, run_id)


def shard_receipt(dataset: str, run_id: str, job: int, jobs: int) -> str:
    """The receipt job ``job`` of ``jobs`` writes when all of its shards have rows."""
    return paths.job_receipt(dataset, run_id, job, jobs)


def shard_receipts(dataset: str, run_id: str, sharding: Sharding) -> list[str]:
    """The receipts of a sharded run's jobs (what its gather waits for)."""
    jobs = len(sharding.groups())
    return [shard_receipt(dataset, run_id, g, jobs) for g in range(jobs)]


def job_shards(sharding: Sharding, job: int, jobs: int) -> list[int]:
    """The shards of job ``job`` of ``jobs`` (ValueError for a job of another plan)."""
    groups = sharding.groups()
    if jobs != len(groups) or not 0 <= job < jobs:
        raise ValueError(f"job {job} of {jobs}: the plan has {len(groups)} job(s)")
    return groups[job]


def shard_rows(dataset: str, run_id: str, sharding: Sharding, shards=None) -> list[str]:
    n = sharding.n
    return [paths.shard_row(dataset, run_id, i, n)
            for i in (range(n) if shards is None else shards)]
