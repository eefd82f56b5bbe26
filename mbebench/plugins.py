"""Engines brought by the config: the spec of a ``module:`` or ``command:`` entry.

::

    engines:
      mine:                         # a Python engine
        module: "mypkg.mbe:run"     # run(graph, **params) -> EngineResult, or an EngineSpec
        params: {alpha: [1, 2]}     # a list is a sweep
      theirs:                       # a command-line engine (mbebench.command)
        command: ["my-mbe", "--in", "{graph}", "--threads", "{threads}"]
        input: adj                  # the file {graph} is: csr, konect or adj
        params: {threads: 4}
        cpus: threads               # CPUs of one run: a number or a parameter

A Python function's keyword arguments are its parameters (types from their
defaults; a function with ``**kwargs`` takes any); a command's parameters are
the keys of ``params``, and each must appear in the command as ``{key}``, so a
misspelled key is an error rather than a silently unused value.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mbebench import command as cmd
from mbebench.spec import GPU_OPTIONS, REQUIRED, RUN_OPTIONS, ConfigError, EngineSpec, Param

INPUTS = ("csr", "konect", "adj")
PLUGIN_KEYS: dict[str, dict] = {
    "module": {"type": "string", "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$",
               "description": "Your Python engine: 'module:function' (run(graph, **params)) "
                              "or 'module:SPEC' (an mbebench.spec.EngineSpec)."},
    "command": {"anyOf": [{"type": "string", "minLength": 1},
                          {"type": "array", "items": {"type": "string"}, "minItems": 1}],
                "description": "Your command-line engine (README: 'Bring your own engine')."},
    "input": {"enum": list(INPUTS), "description": "The file {graph} is (command engines)."},
    "params": {"type": "object", "description": "Parameters; a list is a sweep."},
    "cpus": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}],
             "description": "CPUs of one run: a number, or the parameter that gives it."},
    "gpu": {"type": "boolean", "description": "A run needs a GPU."},
    "title": {"type": "string", "minLength": 1, "description": "Name in tables and plots."},
    **RUN_OPTIONS,
    **GPU_OPTIONS,
}


def is_plugin(section: Any) -> bool:
    return isinstance(section, Mapping) and ("module" in section or "command" in section)


def plugin_spec(name: str, section: Mapping, where: str) -> EngineSpec:
    """The spec of a ``module:`` or ``command:`` config entry (ConfigError naming the key)."""
    import jsonschema

    unknown = [k for k in section if k not in PLUGIN_KEYS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (a plug-in takes "
                          f"{', '.join(PLUGIN_KEYS)}; parameters go under 'params')")
    schema = {"type": "object", "properties": PLUGIN_KEYS}
    for err in jsonschema.Draft202012Validator(schema).iter_errors(dict(section)):
        key = ".".join(str(x) for x in err.path)
        raise ConfigError(f"{where}.{key}: {err.message}")
    if ("module" in section) == ("command" in section):
        raise ConfigError(f"{where}: give either module or command")
    given = dict(section.get("params") or {})
    common = {"title": section.get("title"), "gpu": bool(section.get("gpu", False))}
    if "module" in section:
        if section.get("input", "csr") != "csr":
            raise ConfigError(f"{where}.input: a Python engine gets the CSR graph, not "
                              f"{section['input']!r}")
        spec = _module_spec(name, section["module"], given, where)
        spec = dataclasses.replace(spec, name=name, title=common["title"] or spec.title or name,
                                   gpu=spec.gpu or common["gpu"])
    else:
        spec = _command_spec(name, section["command"], section.get("input", "csr"), given,
                             where, **common)
    if "cpus" in section:
        cpus = section["cpus"]
        if isinstance(cpus, str) and cpus not in {p.name for p in spec.params}:
            raise ConfigError(f"{where}.cpus: {cpus!r} is neither a number nor a parameter")
        spec = dataclasses.replace(spec, cpus=cpus)
    return spec


def _module_spec(name: str, ref: str, given: Mapping, where: str) -> EngineSpec:
    from mbebench.engine import load

    try:
        obj = load(ref)
    except Exception as e:  # an import error of the user's module: say which and why
        raise ConfigError(
            f"{where}.module: cannot load {ref!r} ({type(e).__name__}: {e})"
        ) from None
    if isinstance(obj, EngineSpec):
        if obj.entry is None:
            raise ConfigError(f"{where}.module: {ref!r} is a command-line spec; use command:")
        return obj
    if not callable(obj):
        raise ConfigError(f"{where}.module: {ref!r} is neither a function nor an EngineSpec")
    params, open_params = _signature_params(obj, ref, where)
    extra = [Param(k, None, _sweep(v)) for k, v in given.items()
             if open_params and k not in {p.name for p in params}]
    return EngineSpec(name=name, entry=ref, params=(*params, *extra), open_params=open_params,
                      variant="variant" if any(p.name == "variant" for p in params) else None)


def _signature_params(func, ref: str, where: str) -> tuple[list[Param], bool]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}.module: cannot read the arguments of {ref!r}: {e}") from None
    args = list(sig.parameters.values())
    if not args or args[0].kind not in (args[0].POSITIONAL_ONLY, args[0].POSITIONAL_OR_KEYWORD):
        raise ConfigError(f"{where}.module: {ref!r} must take the graph as first argument")
    params, open_params = [], False
    for a in args[1:]:
        if a.kind is a.VAR_KEYWORD:
            open_params = True
        elif a.kind is a.VAR_POSITIONAL:
            continue
        elif a.default is a.empty:
            params.append(Param(a.name, None, REQUIRED))
        elif isinstance(a.default, (list, tuple, dict)):
            raise ConfigError(f"{where}.module: {ref!r}: the default of {a.name!r} is a "
                              "collection; engine parameters are single values")
        else:
            params.append(Param(a.name, _type_of(a.default), a.default))
    return params, open_params


def _command_spec(name, command, input_, given: Mapping, where: str, *, title, gpu) -> EngineSpec:
    argv = tuple(shlex.split(command) if isinstance(command, str) else command)
    try:
        used = cmd.placeholders(argv)
    except ValueError as e:
        raise ConfigError(f"{where}.command: {e}") from None
    for field in used:
        if field not in given and field not in cmd.GRAPH_FIELDS:
            raise ConfigError(f"{where}.command: placeholder {{{field}}} is neither a key of "
                              f"params nor one of {', '.join(cmd.GRAPH_FIELDS)}")
    if "graph" not in used:
        raise ConfigError(f"{where}.command: the command never names the graph file ({{graph}})")
    for key in given:
        if key in cmd.GRAPH_FIELDS:
            raise ConfigError(f"{where}.params.{key}: {key!r} is the graph's, choose another name")
        if key not in used:
            raise ConfigError(f"{where}.params.{key}: not used in the command (no {{{key}}})")
    _check_program(argv[0], where)
    params = [Param(k, _type_of_all(v), _sweep(v)) for k, v in given.items()]
    return EngineSpec(name=name, command=argv, input=input_, params=tuple(params), title=title,
                      gpu=gpu)


def _check_program(program: str, where: str) -> None:
    """A program that is not there is a config error before anything runs (as a module that
    does not import is), not an error row per dataset at the end.  A program named by a
    placeholder is checked when it runs; ``{python}`` is this interpreter."""
    if cmd.placeholders([program]):
        return
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program)
        if not path.is_file():
            raise ConfigError(f"{where}.command: program {program!r} not found (no such file in "
                              f"{Path.cwd()}; relative paths are relative to --directory)")
        if not os.access(path, os.X_OK):
            raise ConfigError(f"{where}.command: program {program!r} is not executable "
                              "(chmod +x, or start the command with {python} for a script)")
    elif shutil.which(program) is None:
        raise ConfigError(f"{where}.command: program {program!r} not found on PATH")


def _sweep(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _type_of(value: Any) -> type | None:
    for t in (bool, int, float, str):
        if isinstance(value, t):
            return t
    return None


def _type_of_all(value: Any) -> type | None:
    types = {_type_of(v) for v in (value if isinstance(value, list) else [value])}
    if types == {int, float}:
        return float
    return types.pop() if len(types) == 1 else None
