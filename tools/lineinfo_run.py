"""The cuMBE command line with line info in the kernel's device functions as well, for Nsight
Compute's source page (docs/gpu-performance.md, "A dense-core grade"):

    ncu --kernel-name regex:kernel --launch-count 1 --warp-sampling-interval 17 \
        --metrics smsp__pcsamp_sample_count,group:smsp__pcsamp_warp_stall_reasons \
        -o prof python tools/lineinfo_run.py run GRAPH.csr
    ncu --import prof.ncu-rep --page source --csv --print-source cuda,sass > lines.csv
    python tools/pcsamp_lines.py lines.csv      # by line, function and caller

``CUMBE_LINEINFO=1`` gives the kernel line info, but its device functions are compiled apart
and inlined, and without their own every instruction of the search counts to the kernel's
line that calls it.  Here ``numba.cuda.jit`` is wrapped so that the device functions of
``cumbe/kernel/`` get ``lineinfo=True`` too, but those of ``lists.py`` (its fingerprint
module's generated names stop NVVM: "Symbol name with unsupported characters") and the search
loop itself (``search.py``'s ``search``: with its line info NVVM's PTX branches to a label it
never defines, and ptxas stops, "Unknown symbol '$L__BB0_733'", since the rounds build's
shuffled sums; reproduced without a GPU by compiling the rounds build to PTX with these patches
and assembling it, as ``tools/kernel_text.py`` does); their lines count to their callers'
line (the search loop's to ``stages.py``'s call).  The debug-info names of closures
(``make.<locals>.f``) are made plain identifiers.  A build with line info is a build of its
own: it compiles into a cache directory of its own (``NUMBA_CACHE_DIR``, default a
``mbebench-lineinfo`` folder in the temporary directory).  A build with these patches ran at
the default build's speed on planted-xl-e2.3 (16.5 s against 16.4 s, H200, 2026-12-03,
applied by a wrapper of the same patches; this script's own build failed on a GPU on
2026-12-04 as above, and ran with the search loop left out on 2026-12-05: planted-xl-e2.28,
the unprofiled count and fingerprint).  Set ``--warp-sampling-interval`` on runs of seconds:
with the default the samples came from the first seconds only."""

from __future__ import annotations

import os
import re
import sys
import tempfile

# (file, function or "*"): whose device functions keep no line info of their own
SKIP = (("lists.py", "*"), ("search.py", "search"))


def wants_lineinfo(filename: str, function: str = "") -> bool:
    """Whether the device function ``function`` defined in ``filename`` gets line info."""
    parts = filename.replace(os.sep, "/").split("/")
    return parts[-3:-1] == ["cumbe", "kernel"] and not any(
        parts[-1] == f and what in ("*", function) for f, what in SKIP)


def plain_name(name: str) -> str:
    """A debug-info name NVVM takes: closures' ``<locals>`` and the like become ``_``."""
    return re.sub(r"[^A-Za-z0-9_.$]", "_", name)


def wrap_jit(jit):
    """``jit`` with ``lineinfo=True`` for the device functions :func:`wants_lineinfo` names."""

    def patched(*args, **kw):
        if args or not kw.get("device"):
            return jit(*args, **kw)
        plain = jit(**kw)

        def decorate(f):
            code = getattr(f, "__code__", None)
            if code is not None and wants_lineinfo(code.co_filename, code.co_name):
                return jit(lineinfo=True, **kw)(f)
            return plain(f)

        return decorate

    return patched


def enable() -> None:
    """Patch numba before cumbe's kernel modules are imported."""
    os.environ.setdefault("CUMBE_LINEINFO", "1")
    os.environ.setdefault("NUMBA_CACHE_DIR",
                          os.path.join(tempfile.gettempdir(), "mbebench-lineinfo"))
    from numba import cuda
    from numba.cuda import debuginfo

    cuda.jit = wrap_jit(cuda.jit)
    sub = debuginfo.DIBuilder._di_subprogram

    def subprogram(self, name, linkagename, line, function, argmap):
        return sub(self, plain_name(name), linkagename, line, function, argmap)

    debuginfo.DIBuilder._di_subprogram = subprogram


def main(argv: list[str]) -> int:
    if "cumbe.kernel" in sys.modules:
        raise SystemExit("tools/lineinfo_run.py: cumbe.kernel was imported before the patch")
    enable()
    sys.path.insert(0, os.getcwd())
    from cumbe.__main__ import main as cumbe_main

    return cumbe_main(argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
