"""tools/lineinfo_run.py, without a GPU: which device functions get line info, and the
debug-info names NVVM takes (a closure's ``<locals>`` stopped its compile)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("lineinfo_run", REPO / "tools" / "lineinfo_run.py")
lineinfo_run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lineinfo_run)


def _defined_in(path, name):
    """A function as if defined in ``path``."""
    def f(x):
        return x

    f.__code__ = f.__code__.replace(co_filename=str(path), co_name=name)
    f.__name__ = name
    return f


def test_only_the_kernels_device_functions_but_lists_and_the_search_loop_get_line_info():
    kernel = REPO / "cumbe" / "kernel"
    assert lineinfo_run.wants_lineinfo(str(kernel / "maximality.py"), "check_rounds")
    assert lineinfo_run.wants_lineinfo(str(kernel / "search.py"), "expand")
    # the search loop with line info: PTX that branches to a label it never defines
    assert not lineinfo_run.wants_lineinfo(str(kernel / "search.py"), "search")
    assert not lineinfo_run.wants_lineinfo(str(kernel / "lists.py"), "stamp")
    assert not lineinfo_run.wants_lineinfo(str(REPO / "mbebench" / "fingerprint.py"))
    assert not lineinfo_run.wants_lineinfo(str(REPO / "cumbe" / "kernel.py"))


def test_closure_names_become_plain_identifiers():
    assert lineinfo_run.plain_name("make_search.<locals>.expand") == "make_search._locals_.expand"
    assert lineinfo_run.plain_name("f") == "f"


def test_the_wrapped_jit_adds_line_info_to_those_device_functions_only():
    calls = []

    def jit(*args, **kw):
        calls.append((args, dict(kw)))
        return lambda f: (f.__name__, dict(kw))

    wrapped = lineinfo_run.wrap_jit(jit)
    dev = _defined_in(REPO / "cumbe" / "kernel" / "search.py", "dev")
    assert wrapped(device=True, forceinline=True)(dev) == (
        "dev", {"device": True, "forceinline": True, "lineinfo": True})
    other = _defined_in(REPO / "cumbe" / "kernel" / "lists.py", "other")
    assert wrapped(device=True)(other) == ("other", {"device": True})
    loop = _defined_in(REPO / "cumbe" / "kernel" / "search.py", "search")
    assert wrapped(device=True)(loop) == ("search", {"device": True})
    # kernels and positional uses go through untouched (the kernel's line info is CUMBE_LINEINFO's)
    assert wrapped(cache=True)(dev) == ("dev", {"cache": True})
