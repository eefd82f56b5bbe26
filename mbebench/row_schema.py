"""The result row's schema: the one statement of which keys a row holds and what each may be.

``mbebench.runner`` writes rows, ``mbebench.gather`` adds a sharded run's rows up and
``mbebench.rows`` reads them for the report; all three check them against :data:`SCHEMA`
(JSON Schema, checked with ``jsonschema``).  ``docs/architecture.md`` shows an example row.
This module needs no numba and no pandas: the closing summary and the status page use it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

# unavailable: the dataset's download or convert failed, nothing ran (mbebench.dataset_status)
STATUSES = ("ok", "timeout", "error", "skipped", "unavailable")
REQUIRED_KEYS = ("dataset", "run_id", "engine", "status")

_NAME = {"type": "string", "minLength": 1, "description": "a non-empty string"}
_SECONDS = {
    "type": "array",
    "items": {"type": "number", "minimum": 0},
    "description": "a list of seconds",
}
_OBJECT_OR_NULL = {"type": ["object", "null"], "description": "an object"}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "result row",
    "type": "object",
    "required": list(REQUIRED_KEYS),
    "properties": {
        "schema_version": {"type": "integer", "minimum": 1, "description": "an int >= 1"},
        "dataset": _NAME,
        "run_id": _NAME,
        "engine": _NAME,
        "label": {"type": "string", "description": "a str"},
        "timed": {"type": "boolean", "description": "a bool"},
        "params": {"type": "object", "description": "an object"},
        "status": {"enum": list(STATUSES), "description": f"one of {', '.join(STATUSES)}"},
        "message": {"type": ["string", "null"], "description": "a string or null"},
        # null: the engine does not compute it (a command-line engine); its count still counts
        "fingerprint": {
            "anyOf": [{"type": "null"}, {"type": "string", "pattern": "^0x[0-9a-fA-F]{1,16}$"}],
            "description": "a hex fingerprint (0x...) or null",
        },
        "count": {
            "anyOf": [{"type": "null"}, {"type": "integer", "minimum": 0}],
            "description": "an int >= 0 or null",
        },
        "algo_s": {
            "anyOf": [{"type": "null"}, {"type": "array", "items": {"type": "number"}}],
            "description": "a list of numbers",
        },
        "setup_s": {"anyOf": [{"type": "null"}, _SECONDS], "description": "a list of seconds"},
        "graph": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["n_left", "n_right", "n_edges"],
                    "properties": {
                        k: {"type": "integer", "minimum": 0}
                        for k in ("n_left", "n_right", "n_edges")
                    },
                },
            ],
            "description": "an object with int n_left, n_right, n_edges",
        },
        "stats": _OBJECT_OR_NULL,
        "env": _OBJECT_OR_NULL,
        "shards": {
            "type": ["object", "null"],
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "description": "an object whose n is an int >= 1",
        },
    },
    # an ok row carries its result: a count and at least one timed repeat
    "if": {"properties": {"status": {"const": "ok"}}},
    "then": {
        "required": ["count", "algo_s"],
        "properties": {
            "count": {"type": "integer", "minimum": 0, "description": "an int >= 0 (ok row)"},
            "algo_s": {"type": "array", "minItems": 1, "description": "timed repeats (ok row)"},
        },
    },
}

_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def problem(row: Any) -> str | None:
    """What is wrong with ``row`` in one line (naming the key), or None for a valid row."""
    if not isinstance(row, Mapping):
        return f"result row must be a JSON object, got {type(row).__name__}"
    missing = [k for k in REQUIRED_KEYS if k not in row]
    if missing:
        return f"result row lacks key(s) {', '.join(missing)}"
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(dict(row)))
    if error is None:
        # JSON Schema's numbers include NaN and infinity, which Python's json reads
        for key in ("algo_s", "setup_s"):
            if not all(math.isfinite(x) for x in row.get(key) or []):
                return f"{key!r} must be finite seconds, got {row[key]!r}"
        return None
    path = [p for p in error.absolute_path]
    key = path[0] if path else (error.validator_value if error.validator == "required" else "")
    if error.validator == "required":
        return f"ok row lacks {', '.join(map(repr, error.validator_value))}"
    value = row.get(key)
    want = SCHEMA["properties"].get(key, {}).get("description", "valid")
    if row.get("status") == "ok" and key in SCHEMA["then"]["properties"]:
        want = SCHEMA["then"]["properties"][key]["description"]
    return f"{key!r} must be {want}, got {value!r}"


def check(row: Any, source: str = "<row>") -> Mapping:
    """``row`` if it fits :data:`SCHEMA`, else ValueError naming ``source`` and the key."""
    why = problem(row)
    if why is not None:
        raise ValueError(f"{source}: {why}")
    return row


def checked_or_error(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` when it fits the schema; else the row of an error naming what the engine
    returned wrong (a row the report would refuse must not stand for a result)."""
    why = problem(row)
    if why is None:
        return row
    bad = {**row, "status": "error", "count": None, "fingerprint": None,
           "message": f"the engine returned a malformed result: {why}"}
    return dict(check(bad, f"dataset {row.get('dataset')!r} run {row.get('run_id')}"))


def row_or_none(path: str | os.PathLike) -> dict | None:
    """The row in one file, or None when the file is missing, unreadable or not a valid row
    (for the readers to whom such a file is no finished run: status, resume, a job's shards)."""
    try:
        return read_row_file(path)
    except (OSError, ValueError):
        return None


def read_row_file(path: str | os.PathLike) -> dict:
    """The row in one file, checked.  FileNotFoundError passes through (the caller decides
    whether a missing row is an error); anything else wrong is a ValueError naming the file."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError:
        raise
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"{path}: not a readable JSON result row ({e})") from None
    return dict(check(obj, str(path)))
