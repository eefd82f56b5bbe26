"""The pipeline's config check: one line per error, naming the key and the expected form.

Snakemake's own ``validate`` stops at the first error and prints the whole schema and
config with it (a misspelt top-level key printed 288 lines).  :func:`validate` checks the
config against ``workflow/schemas/config.schema.yaml`` and, when it fails, raises one
:class:`~mbebench.spec.ConfigError` whose message has a line per error; the Snakefile
prints them (:func:`fail`) and stops before any job.
"""

from __future__ import annotations

import difflib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from mbebench.spec import ConfigError

_TYPES = {"integer": "an integer", "number": "a number", "string": "a string",
          "boolean": "true or false", "array": "a list", "object": "a mapping", "null": "empty"}


def _short(value: Any, width: int = 60) -> str:
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)  # a name prints as itself
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def expected(schema: Mapping) -> str:
    """The form ``schema`` asks for, in words: 'an integer >= 1', 'a list of ...'."""
    if "enum" in schema:
        return "one of " + ", ".join(_short(v) for v in schema["enum"])
    types = schema.get("type")
    types = [types] if isinstance(types, str) else list(types or [])
    words = " or ".join(_TYPES.get(t, t) for t in types) or "a value"
    limits = [f"{op} {schema[k]:g}" for k, op in (("minimum", ">="), ("exclusiveMinimum", ">"),
                                                 ("maximum", "<="), ("exclusiveMaximum", "<"))
              if isinstance(schema.get(k), (int, float))]
    if "pattern" in schema:
        limits.append(f"matching {schema['pattern']}")
    if limits:
        words += " " + " and ".join(limits)
    if "array" in types and isinstance(schema.get("items"), Mapping):
        words += f" (each {expected(schema['items'])})"
    return words


def _key(path) -> str:
    return ".".join(str(p) for p in path) or "(the config)"


def _line(err) -> str:
    where = _key(err.absolute_path)
    v, schema = err.validator, err.schema
    if "propertyNames" in err.schema_path:
        return (f"{where}: the name {_short(err.instance)} is not allowed "
                f"(expected {expected(schema).replace('a value ', 'a name ')})")
    if v == "additionalProperties":
        known = list(schema.get("properties") or {})
        extra = [k for k in err.instance if k not in known]
        lines = []
        for k in extra:
            key = f"{where}.{k}" if err.absolute_path else str(k)
            close = difflib.get_close_matches(str(k), known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            lines.append(f"{key}: unknown key ({hint}known: {', '.join(known)})")
        return "\n".join(lines)
    if v == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return "\n".join(f"{where + '.' if err.absolute_path else ''}{k}: missing (required)"
                         for k in missing)
    if v == "anyOf":
        options = [", ".join(s.get("required", [])) for s in err.validator_value]
        if all(options):
            return f"{where}: give one of the keys {', '.join(options)}"
    if v == "minProperties":
        return f"{where}: give at least {err.validator_value} entry(ies)"
    if v == "propertyNames":
        return (f"{where}: the key {_short(err.instance)} is not a valid name "
                f"(expected {expected(schema.get('propertyNames', {}))})")
    if v == "uniqueItems":
        return f"{where}: got {_short(err.instance)}; expected a list without repeats"
    return f"{where}: got {_short(err.instance)}; expected {expected(schema)}"


def errors(config: Mapping, schema: Mapping) -> list[str]:
    """One line per error of ``config`` against ``schema`` (empty: it validates)."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    lines: list[str] = []
    for err in sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.path]):
        # propertyNames errors point at the object; its key is the instance of the sub-error
        lines += [ln for ln in _line(err).splitlines() if ln not in lines]
    return lines


def load_schema(path: str | Path) -> dict:
    import yaml

    return yaml.safe_load(Path(path).read_text())


def load_config(path: str | Path) -> dict | None:
    """A YAML config file as loaded, or None when it is missing or unreadable."""
    import yaml

    try:
        obj = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError):
        return None
    return obj if isinstance(obj, dict) else None


def check_yaml(path: str | Path) -> None:
    """ConfigError naming the file, line and column of a YAML syntax error in ``path`` (a
    missing file is left to Snakemake, which names it)."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read it ({' '.join(str(e).split())})") from None
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        why = getattr(e, "problem", None) or " ".join(str(e).split())
        raise ConfigError(f"{where}: not valid YAML ({why})") from None


def check_config_file(path: str | Path) -> None:
    """What the Snakefile does before its ``configfile:``: a syntax error in the workflow's
    config file is one line naming the file and line (Snakemake's names neither), and
    nothing runs."""
    try:
        check_yaml(path)
    except ConfigError as e:
        fail(e)


def validate(config: dict, schema_path: str | Path) -> None:
    """Check ``config`` (one line per error, ConfigError) and fill in the schema's defaults
    (Snakemake's ``validate``, which then passes)."""
    from snakemake.utils import validate as fill_defaults

    lines = errors(config, load_schema(schema_path))
    if lines:
        raise ConfigError("\n".join(lines))
    fill_defaults(config, str(schema_path))


def fail(e: ConfigError) -> NoReturn:
    """Print a config error, a line per problem, and stop Snakemake before any job (exit 1,
    without Snakemake's traceback of the Snakefile)."""
    for line in str(e).splitlines():
        print(f"config error: {line}", file=sys.stderr)
    raise SystemExit(1)
