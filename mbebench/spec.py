"""Engine specs: what an engine is called, which parameters it takes, what a run needs.

Every engine declares one :class:`EngineSpec` (``cumbe/spec.py``,
``baselines/imbea_spec.py``, ...; a plug-in gets one from its config entry,
see :mod:`mbebench.plugins`).  The spec is the only place where an engine's
parameters, their defaults, types and limits live: the config section of the
engine is validated against the JSON schema generated from it
(:meth:`EngineSpec.section_schema`), the run plan expands its parameter grid
(:meth:`EngineSpec.grid`), and direct runs fill their defaults from it
(:meth:`EngineSpec.resolve`).

Nothing here imports an engine: spec modules must stay cheap to import, because
the Snakefile reads them on every start.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


# Run options any engine section may hold next to its parameters.
RUN_OPTIONS: dict[str, dict] = {
    "enabled": {"type": "boolean", "default": True, "description": "Run this engine."},
    "repeats": {"type": "integer", "minimum": 1,
                "description": "Timed repeats of each run (default: engines.repeats)."},
    "timeout_s": {"type": "number", "exclusiveMinimum": 0,
                  "description": "Seconds per run before it is killed and recorded as "
                                 "'timeout' (default: engines.timeout_s)."},
    "datasets": {"type": "array", "items": {"type": "string"},
                 "description": "Run this engine only on these datasets (empty = all)."},
}
GPU_OPTIONS: dict[str, dict] = {
    "require_gpu": {"type": "boolean", "default": False,
                    "description": "Fail instead of recording 'skipped' when there is no GPU."},
}
SIMULATOR_OPTIONS: dict[str, dict] = {
    "simulate": {"type": "boolean", "default": False,
                 "description": "Run in the engine's simulator on the CPU (CI, no GPU): counts "
                                "are real, times are not."},
}
_TYPES = {int: "integer", float: "number", bool: "boolean", str: "string"}
_SLUG = re.compile(r"[^A-Za-z0-9_.+]+")


class ConfigError(ValueError):
    """The config names something that does not exist or cannot work."""


class _Required:
    def __repr__(self) -> str:
        return "<required>"


# default of a parameter the config must give (a plug-in function's argument without default)
REQUIRED = _Required()


@dataclass(frozen=True)
class Param:
    """One engine parameter.

    ``default`` is what the pipeline runs when the config does not set the
    parameter; a tuple default is a sweep (one run per value), whose first
    value is the default of a single run.  A list in the config is a sweep too,
    so a parameter's own values are never lists.
    """

    name: str
    # int, float, bool, str, or a tuple of them (e.g. (int, str)); None: any JSON value, unchecked
    type: type | tuple | None
    default: Any
    doc: str = ""
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    multiple_of: int | None = None
    nullable: bool = False
    pattern: str | None = None  # a string value must match this regex (JSON schema "pattern")
    # how a run id / table label shows the value: "p" -> p2 / "p=2"; a bool shows
    # ``short`` when true and nothing when false
    short: str | None = None
    bare: bool = False  # shown as the value alone (variant names)
    key: bool = False  # in every run id and label, not only when swept
    # True makes a run a measurement probe (an instrumented build): it counts for the
    # agreement check, runs once, and its times are not the engine's time
    untimed: bool = False
    fit_cores: bool = False  # values above the machine's core count are dropped
    aliases: tuple[str, ...] = ()  # older config names of this key

    def check_default(self) -> None:
        """The default passes the parameter's own limits (checked by the tests and by the
        config loader, not at import: engines import their specs on machines without the
        config machinery, e.g. the GPU image without jsonschema)."""
        if self.default is not REQUIRED:
            for v in self.sweep(self.default):
                self.check(v, f"default of {self.name}")

    @property
    def abbrev(self) -> str:
        return self.short or self.name

    @staticmethod
    def sweep(value: Any) -> list:
        return list(value) if isinstance(value, (list, tuple)) else [value]

    @property
    def single_default(self) -> Any:
        return self.sweep(self.default)[0]

    def value_schema(self) -> dict:
        s: dict[str, Any] = {}
        t = ([_TYPES[x] for x in self.type] if isinstance(self.type, tuple)
             else _TYPES.get(self.type))
        if t:
            t = t if isinstance(t, list) else [t]
            s["type"] = [*t, "null"] if self.nullable else (t if len(t) > 1 else t[0])
        if self.choices:
            s["enum"] = [*self.choices, *([None] if self.nullable else [])]
        for key, val in (("minimum", self.minimum), ("maximum", self.maximum),
                         ("multipleOf", self.multiple_of), ("pattern", self.pattern)):
            if val is not None:
                s[key] = val
        return s

    def config_schema(self) -> dict:
        """Schema of the config key: one value, or a list of values (a sweep)."""
        one = self.value_schema()
        out = {
            "anyOf": [one, {"type": "array", "items": one, "minItems": 1, "uniqueItems": True}],
            "description": (self.doc + " A list runs one run per value.").strip(),
        }
        if self.default is not REQUIRED:
            out["default"] = list(self.default) if isinstance(self.default, tuple) else self.default
        return out

    def check(self, value: Any, where: str) -> Any:
        """``value`` if valid for this parameter (ints given as 5.0 become 5), else ConfigError."""
        import jsonschema  # only config checks need it: engines import this module too

        errors = sorted(jsonschema.Draft202012Validator(self.value_schema()).iter_errors(value),
                        key=lambda e: e.path)
        if errors or (self.type is float and isinstance(value, float) and not math.isfinite(value)):
            why = errors[0].message if errors else f"{value!r} is not a finite number"
            raise ConfigError(f"{where}: {why}")
        if self.type is int and isinstance(value, float):
            return int(value)
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value



# The shard parameter every built-in engine takes (mbebench.shard computes the
# partition; the engines' specs list this one Param so that its form and doc are
# written once).  Every shard of a run must be given the same other parameters.
SHARD = Param(
    "shard", str, "0/1", pattern=r"^[0-9]+/[0-9]+$",
    doc="Run only shard i of n ('i/n', 0 <= i < n) of the first-level tasks, balanced by "
        "estimated cost; the n shards' counts and fingerprints sum to the whole run's. "
        "'0/1' = everything.",
)

@dataclass(frozen=True)
class EngineSpec:
    """Everything the pipeline needs to know about one engine.

    A Python engine names its function in ``entry`` (``"module:function"``, called
    as ``run(graph, **params)``); a command-line engine gives ``command`` (argv
    with ``{graph}`` / ``{<param>}`` placeholders, see :mod:`mbebench.command`)
    and ``input``, the file it reads: ``csr``, ``konect`` or ``adj``.
    """

    name: str
    params: tuple[Param, ...] = ()
    entry: str | None = None
    command: tuple[str, ...] | None = None
    input: str = "csr"
    title: str | None = None  # the name tables and plots show
    doc: str = ""
    variant: str | None = None  # the parameter whose value is the row's "variant"
    gpu: bool = False
    cpus: int | str = 1  # CPUs of one run: a number, or the parameter that gives it
    # GPUs of one run (Snakemake's ``gpu`` resource) from its parameters; None: 1 if ``gpu``
    gpus: Callable[[Mapping[str, Any]], int] | None = field(default=None, compare=False)
    simulator_env: Mapping[str, str] | None = None  # environment of a run with simulate: true
    open_params: bool = False  # takes any parameter (a function with **kwargs)
    # runs unless its section says enabled: false; False: only when it says enabled: true
    # (the published codes, mbebench.published: fetched and built only when asked for)
    enabled: bool = True
    # parameter combinations the engine does not run (e.g. a switch that only one variant
    # takes): left out of the config's grid
    skip: Callable[[Mapping[str, Any]], bool] | None = field(default=None, compare=False)
    _validator: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self):
        if (self.entry is None) == (self.command is None):
            raise ValueError(f"engine {self.name!r}: give exactly one of entry and command")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"engine {self.name!r}: duplicate parameter names {names}")
        clash = set(names) & self.run_options().keys()
        if clash:
            raise ValueError(
                f"engine {self.name!r}: parameter names {sorted(clash)} are run options"
            )
        if self.variant is not None and self.variant not in names:
            raise ValueError(f"engine {self.name!r}: variant parameter {self.variant!r} unknown")
        if isinstance(self.cpus, str) and self.cpus not in names:
            raise ValueError(f"engine {self.name!r}: cpus parameter {self.cpus!r} unknown")

    # ------------------------------------------------------------------ lookups

    @property
    def label(self) -> str:
        return self.title or self.name

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        """Parameter -> the default of a single run."""
        return {p.name: p.single_default for p in self.params}

    def run_options(self) -> dict[str, dict]:
        opts = dict(RUN_OPTIONS)
        if self.gpu:
            opts.update(GPU_OPTIONS)
        if self.simulator_env:
            opts.update(SIMULATOR_OPTIONS)
        return opts

    # ------------------------------------------------------------------ validation

    def section_schema(self) -> dict:
        """JSON schema of this engine's config section: run options and parameters."""
        props = {k: dict(v) for k, v in self.run_options().items()}
        props["enabled"]["default"] = self.enabled
        for p in self.params:
            props[p.name] = p.config_schema()
            for alias in p.aliases:
                props[alias] = {**p.config_schema(), "deprecated": True,
                                "description": f"Old name of {p.name}."}
        return {
            "type": "object",
            "description": self.doc,
            "additionalProperties": False,
            "properties": props,
        }

    def check_section(self, section: Mapping, where: str) -> dict:
        """The section with aliases renamed, if it validates; else ConfigError naming the key."""
        if not isinstance(section, Mapping):
            raise ConfigError(f"{where}: must be a mapping, got {section!r}")
        known = self.section_schema()["properties"]
        for key in section:
            if key not in known:
                raise ConfigError(
                    f"{where}: unknown key {key!r} (parameters: "
                    f"{', '.join(p.name for p in self.params) or 'none'}; run options: "
                    f"{', '.join(self.run_options())})"
                )
        import jsonschema

        validator = jsonschema.Draft202012Validator(self.section_schema())
        for err in sorted(validator.iter_errors(dict(section)), key=lambda e: list(e.path)):
            key = ".".join(str(x) for x in err.path)
            raise ConfigError(f"{where}.{key}: {_why(err)}" if key else f"{where}: {err.message}")
        out = dict(section)
        for p in self.params:
            for alias in p.aliases:
                if alias in out:
                    if p.name in out:
                        raise ConfigError(
                            f"{where}: give {p.name!r} or its old name {alias!r}, not both"
                        )
                    out[p.name] = out.pop(alias)
        return out

    def resolve(self, params: Mapping[str, Any], where: str | None = None) -> dict[str, Any]:
        """The complete parameters of one run: defaults filled in, unknown keys and bad
        values refused."""
        where = where or f"engine {self.name}"
        for p in self.params:
            p.check_default()
        out = {}
        known = {p.name for p in self.params}
        unknown = [k for k in params if k not in known]
        if unknown and not self.open_params:
            raise ConfigError(
                f"{where}: unknown parameter {unknown[0]!r} "
                f"(known: {', '.join(sorted(known)) or 'none'})"
            )
        for p in self.params:
            if p.name in params:
                out[p.name] = p.check(params[p.name], f"{where}.{p.name}")
            elif p.single_default is REQUIRED:
                raise ConfigError(f"{where}: parameter {p.name!r} has no default, give it")
            else:
                out[p.name] = p.single_default
        out.update({k: v for k, v in params.items() if k not in known})
        return out

    # ------------------------------------------------------------------ runs

    def grid(self, values: Mapping[str, Any], where: str, cores: int) -> list[dict[str, Any]]:
        """Every run of a config section: the product of its parameters' values.

        ``values`` holds the section's parameters (already checked); a list is a
        sweep, a missing key takes the parameter's default (itself maybe a sweep).
        """
        axes = []
        for p in self.params:
            given = values.get(p.name, p.default)
            if given is REQUIRED:
                raise ConfigError(f"{where}: parameter {p.name!r} has no default, give it")
            vals = [p.check(v, f"{where}.{p.name}") for v in Param.sweep(given)]
            if p.fit_cores:
                vals = fit_cores(vals, cores)
            axes.append([(p.name, v) for v in vals])
        extra = {k: v for k, v in values.items() if k not in {p.name for p in self.params}}
        grid = [{**dict(combo), **extra} for combo in itertools.product(*axes)]
        return [g for g in grid if self.skip is None or not self.skip(g)]

    def cpus_for(self, params: Mapping[str, Any]) -> int:
        return int(params[self.cpus]) if isinstance(self.cpus, str) else int(self.cpus)

    def gpus_for(self, params: Mapping[str, Any], where: str | None = None) -> int:
        """GPUs one run with ``params`` takes (0 for a CPU engine); a ConfigError naming
        ``where`` when the parameters cannot say."""
        if not self.gpu:
            return 0
        if self.gpus is None:
            return 1
        try:
            return int(self.gpus(params))
        except ValueError as e:
            raise ConfigError(f"{where or f'engine {self.name}'}: {e}") from None

    def timed(self, params: Mapping[str, Any]) -> bool:
        """False for a measurement probe (an untimed parameter set to true)."""
        return not any(p.untimed and params.get(p.name) for p in self.params)

    def variant_of(self, params: Mapping[str, Any]) -> str | None:
        return None if self.variant is None else params.get(self.variant)

    def names(self, name: str, runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """(run id, label) of each run of one config section.

        A parameter shows in both when it is a ``key`` parameter or when its value
        differs between the section's runs (a sweep); ids are file names, labels
        are what tables and plots show.  Nothing ever parses either back.
        """
        varying = {
            p.name for p in self.params
            if len({json.dumps(r.get(p.name), sort_keys=True) for r in runs}) > 1
        }
        out = []
        for r in runs:
            ids, labels = [name], [self.label]
            for p in self.params:
                if not (p.key or p.name in varying):
                    continue
                v = r.get(p.name)
                if p.type is bool or isinstance(v, bool):
                    if v:
                        ids.append(_slug(p.abbrev))
                        labels.append(p.abbrev)
                elif p.bare:
                    ids.append(_slug(v))
                    if str(v) != self.label:
                        labels.append(str(v))
                else:
                    ids.append(f"{_slug(p.abbrev)}{_slug(v)}")
                    labels.append(f"{p.abbrev}={v}")
            out.append(("-".join(ids), " ".join(labels)))
        return out


def fit_cores(values: Sequence[int], cores: int) -> list[int]:
    """Counts that fit the machine (ascending, distinct); the core count if none does."""
    fitting = sorted({int(v) for v in values if 1 <= int(v) <= cores})
    return fitting or [cores]


def _slug(value: Any) -> str:
    text = "none" if value is None else str(value)
    return _SLUG.sub("_", text).strip("_") or "_"


def _why(err) -> str:
    # one value or a list of values (a sweep): explain the form the config used
    if err.validator == "anyOf" and err.context:
        branch = 1 if isinstance(err.instance, list) else 0
        errs = [e for e in err.context if e.schema_path and e.schema_path[0] == branch]
        e = (errs or list(err.context))[0]
        return e.message + (f" (list item {e.path[0]})" if e.path else "")
    return err.message
