"""The build of ParMBE's ahead-of-time kernels (:mod:`baselines.parmbe_aot`), with
``numba.pycc``; run in a process of its own by :func:`baselines.parmbe_aot.build`:

    python -m baselines._parmbe_aot_exports --name NAME --out FOLDER

The planner's kernels are exported as they are (pycc compiles their Python source).  The
search is a closure (``_parmbe_kernel.build``) and takes ``ctr``, which an exported
signature cannot say is None, so the export is :func:`run_tasks` below, which calls the
engine's search with ``ctr=None``: numba compiles that call as the engine's specialisation
(the counters pruned) and links it in.  No kernel code is copied here.

Two settings differ from pycc's defaults, so that the extension runs as numba's JIT
kernels do:

* every export releases the GIL while it runs (pycc's wrapper keeps it): the planner
  fills its cost estimates from several threads (``parmbe_plan._Prepared.estimates``), as
  the JIT kernels (``nogil=True``) let it;
* the code is for this CPU: its name and its feature flags as numba's JIT asks LLVM for
  them (pycc's ``target_cpu="host"`` alone gives the CPU model's nominal features, which a
  virtual machine may not all offer).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from numba import types
from numba.pycc import CC

from baselines import _parmbe_kernel as search
from baselines import _parmbe_plan_kernel as plan
from baselines import parmbe_aot

_engine_search = search.run_tasks


def run_tasks(uo, ui, vo, vi, rank, verts, ks, nks, u_is_left, cnt, slot, touched, buf):
    return _engine_search(uo, ui, vo, vi, rank, verts, ks, nks, u_is_left, cnt, slot,
                          touched, buf, None)


FUNCTIONS = {
    "run_tasks": run_tasks,
    "tail_estimates": plan.tail_estimates.py_func,
    "tail_sizes": plan.tail_sizes.py_func,
    "build_tasks": plan.build_tasks.py_func,
    "item_bounds": plan.item_bounds.py_func,
}


def numba_type(text: str):
    """A numba type from :data:`baselines.parmbe_aot.EXPORTS`'s notation."""
    text = text.strip()
    if text.startswith("("):  # a tuple: its items hold no comma of their own
        return types.Tuple(tuple(numba_type(p) for p in text[1:-1].split(",")))
    if "[" in text:
        base, _, rest = text.partition("[")
        return types.Array(getattr(types, base), 1, "C", readonly=rest.endswith("r"))
    return getattr(types, text)


def signature(fname: str):
    args, ret = parmbe_aot.EXPORTS[fname]
    return numba_type(ret)(*map(numba_type, args))


def _as_the_jit_does() -> dict:
    """Patch this process's pycc: exports release the GIL, code for the host's CPU with its
    features (see the module's docstring).  Returns the CPU name and features used."""
    from numba.core import codegen
    from numba.pycc import compiler

    pycc_flags = compiler.Flags

    def flags():
        f = pycc_flags()
        f.release_gil = True
        return f

    compiler.Flags = flags
    # the JIT's own choice (JITCPUCodegen._customize_tm_features), which honours
    # NUMBA_CPU_FEATURES as the CPU's name honours NUMBA_CPU_NAME
    codegen.AOTCPUCodegen._customize_tm_features = codegen.CPUCodegen._get_host_cpu_features
    return {"cpu_name": codegen.CPUCodegen._get_host_cpu_name(None),
            "cpu_features": codegen.CPUCodegen._get_host_cpu_features(None)}


def compile_extension(name: str, out: Path) -> dict:
    """Write extension ``name`` into the folder ``out``; returns its build record."""
    target = _as_the_jit_does()
    cc = CC(name, source_module=sys.modules[__name__])
    cc.output_dir = str(out)
    cc.target_cpu = "host"
    for fname, fn in FUNCTIONS.items():
        cc.export(fname, signature(fname))(fn)
    t0 = time.perf_counter()
    cc.compile()
    return {**target, "compile_s": round(time.perf_counter() - t0, 3),
            "file": cc.output_file}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m baselines._parmbe_aot_exports")
    ap.add_argument("--name", required=True, help="the module's name (parmbe_aot.module_name)")
    ap.add_argument("--out", required=True, type=Path, help="the folder to write it into")
    a = ap.parse_args(argv)
    k = parmbe_aot.key()
    if parmbe_aot.module_name(k) != a.name:  # an edit since the caller read the sources
        print(f"the sources' key is {parmbe_aot.module_name(k)}, not {a.name}", file=sys.stderr)
        return 3
    record = compile_extension(a.name, a.out)
    from mbebench import jitcache

    jitcache._digests.clear()
    if parmbe_aot.module_name() != a.name:  # edited while compiling: the file is not of a.name
        print("the sources changed during the build", file=sys.stderr)
        return 3
    (a.out / f"{a.name}.json").write_text(json.dumps({"key": k, **record}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
