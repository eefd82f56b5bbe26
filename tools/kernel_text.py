"""Fingerprints of cuMBE's machine code, without a GPU: did a refactor change what runs?

    python tools/kernel_text.py cuMBE noRS noES noWS cuMBE-instr cuMBE-pieces cuMBE-compact \
        cuMBE-rounds cuMBE-rounds-hubs

Per build (variant[-flag...], each flag a switch of the tree's ``cumbe.kernel.build``: instr,
pieces, compact, rounds, hubs; 128 threads, sm_90): the kernel compiled
to PTX at the engine's launch bound here (numba's CUDA target with the current device faked as compute capability 9.0, the CUDA
toolkit's libnvvm under ``CUDA_HOME``, default /usr/local/cuda-13.0, and ``nvidia-cuda-nvrtc``),
assembled with ``ptxas``, and a hash of the bytes of the cubin's ``.text`` sections (not their
names: numba's mangled names carry a hash of the closure, which a rename changes without
changing the code), then what ptxas reports of it: registers, stack frame and spills (a build
whose hot loops spill runs slower than its operation count says).
Equal fingerprints in two trees (run it in each) mean the same machine code, so the same speed: a
refactor of the kernel needs no device timing then.  About 20-30 s a build on one core.
Fingerprints printed before 2026-12-02 were of the kernel compiled without the launch bound:
compare fingerprints from one version of this tool only (run it in both trees).

``--sass``: also the machine code's instructions by the kernel's source line they are
attributed to (``nvdisasm -g``; the device functions are inlined, so a line is a call site in
``cumbe/kernel/stages.py``: the warps' stage, the block-wide stage, the barriers), with its
local loads and stores (spills) and convergence-barrier moves (``BMOV``).  Compiled with line
information, which leaves the code as it is (the same fingerprints).  Needs ``nvdisasm``:
``NVDISASM``, else ``CUDA_HOME/bin``, else the ``nvidia-cuda-nvdisasm`` wheel.  Static counts,
not executed ones: on an H100 the build without the block-wide phase had fewer spill
instructions in its warps' stage and three times its ``BMOV`` moves, and was 1.07-1.22x slower
(``git show 7d87079:benchmarks/gpu/results/2026-12-06-warps-only/README.md``).
``--device-lines`` (implies ``--sass``): the device functions' own lines too, and the totals
by file, through ``tools/lineinfo_run.py``'s patches (the search loop and ``lists.py`` still
count to their callers); that build's code is not quite the plain one's (another fingerprint,
a few instructions apart).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("CUDA_HOME", "/usr/local/cuda-13.0")
sys.path.insert(0, os.getcwd())  # the tree it is run in


def text_fingerprint(cubin: bytes) -> str:
    """sha256 over the sorted digests of the ELF64 cubin's ``.text*`` sections, and their
    total bytes (16 bytes an sm_90 instruction): set-up code that grows the kernel moved its
    speed (benchmarks/memory-caps/README.md has the figures)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    secs = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names_at = secs[shstrndx][4]
    parts = []
    total = 0
    helpers = []
    for name, _type, _flags, _addr, off, size in secs:
        n = cubin[names_at + name: cubin.index(b"\0", names_at + name)]
        if n.startswith(b".text"):
            parts.append(hashlib.sha256(cubin[off: off + size]).hexdigest())
            total += size
            if n.startswith(b".text.__cuda_"):
                helpers.append(n[len(b".text."):].decode())
    digest = hashlib.sha256("".join(sorted(parts)).encode()).hexdigest()[:16]
    # the toolkit's subroutines (64-bit division and remainder by a variable): a call in a
    # hot loop costs its register save everywhere (docs/gpu-performance.md, "The check in
    # rounds without a division")
    calls = f", calls {' '.join(sorted(helpers))}" if helpers else ""
    return f"{digest} ({len(parts)} sections, {total} bytes{calls})"


def resources(ptxas_log: str) -> str:
    """ptxas -v's figures for the kernel: its stack frame, spill stores and loads, registers."""
    figures = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes "
                         r"spill loads|Used (\d+) registers", ptxas_log)
    frame = next((f[:3] for f in figures if f[0]), ("?", "?", "?"))
    regs = next((f[3] for f in figures if f[3]), "?")
    return (f"stack {frame[0]} B, spill stores {frame[1]} B, spill loads {frame[2]} B, "
            f"{regs} registers")


def nvdisasm() -> str:
    found = os.environ.get("NVDISASM") or os.path.join(os.environ["CUDA_HOME"], "bin", "nvdisasm")
    if os.path.isfile(found):
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        for sub in ("cu13", "cuda_nvdisasm"):
            path = os.path.join(root, sub, "bin", "nvdisasm")
            if os.path.isfile(path):
                return path
    raise SystemExit("kernel_text: no nvdisasm (set NVDISASM, or pip install "
                     "'nvidia-cuda-nvdisasm==13.*')")


SASS_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')
SASS_OP = re.compile(r"\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)")


def sass_by_line(sass: str) -> dict:
    """{(file, line): [instructions, LDL, STL, BMOV]} of ``nvdisasm -g`` output."""
    out, at = {}, ("(no line)", 0)
    for ln in sass.splitlines():
        m = SASS_LINE.search(ln)
        if m:
            at = (m.group(1), int(m.group(2)))
            continue
        m = SASS_OP.match(ln)
        if m:
            c = out.setdefault(at, [0, 0, 0, 0])
            c[0] += 1
            for i, op in enumerate(("LDL", "STL", "BMOV"), 1):
                c[i] += m.group(2) == op
    return out


def print_sass(cubin_path: str) -> None:
    sass = subprocess.run([nvdisasm(), "-g", "-c", cubin_path], check=True,
                          capture_output=True, text=True).stdout
    counts = sass_by_line(sass)
    rows = sorted(counts.items(), key=lambda kv: -kv[1][0])
    for (path, line), (n, ldl, stl, bmov) in rows[:4]:
        try:
            with open(path) as f:
                text = f.read().splitlines()[line - 1].strip()[:60]
        except (OSError, IndexError):
            text = ""
        print(f"    {os.path.basename(path)}:{line} {n} instructions, LDL {ldl}, STL {stl}, "
              f"BMOV {bmov}  {text}", flush=True)
    files = {}
    for (path, _), c in counts.items():
        f = files.setdefault(os.path.basename(path), [0, 0, 0, 0])
        for i, v in enumerate(c):
            f[i] += v
    print("    by file (instructions, LDL, STL, BMOV):",
          ", ".join(f"{k} {v}" for k, v in sorted(files.items(), key=lambda kv: -kv[1][0])))


def main(argv: list[str]) -> int:
    lines = "--device-lines" in argv
    sass = lines or "--sass" in argv  # (device lines are a kind of --sass listing)
    if lines:
        spec = importlib.util.spec_from_file_location(
            "lineinfo_run", os.path.join(os.path.dirname(__file__), "lineinfo_run.py"))
        lineinfo_run = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(lineinfo_run)
        lineinfo_run.enable()  # before cumbe.kernel is imported
    argv = [a for a in argv if a not in ("--sass", "--device-lines")]
    import numba.cuda.dispatcher as nd
    from numba import cuda, types
    from numba.np.numpy_support import from_dtype

    class _CC90:
        compute_capability = (9, 0)

    nd.get_current_device = lambda: _CC90()  # no device here: compile for sm_90
    from cumbe import buffers
    from cumbe import kernel
    from cumbe.kernel import indexing
    from cumbe.variants import ABLATIONS

    plan = buffers.Plan(1, 1, 1, 1, 1, 1, 1, 2)
    sig = tuple(types.Array(from_dtype(b.dtype), len(b.shape(plan)), "C") for b in buffers.SPEC)
    ptxas = os.path.join(os.environ["CUDA_HOME"], "bin", "ptxas")
    for spec in argv or ["cuMBE"]:
        variant, *flags = spec.split("-")
        rs, es, ws = ABLATIONS[variant]
        t = time.time()
        # every flag is a switch of the tree's kernel.build (instr, pieces, compact, rounds, hubs)
        try:
            kern = kernel.build(rs=rs, es=es, ws=ws, threads=128, cache=False,
                                **{f: True for f in flags})
        except TypeError as e:
            raise SystemExit(f"kernel_text: {spec}: not a build of this tree ({e})") from None
        with (indexing.non_negative() if kernel.non_negative_indexing()
              else contextlib.nullcontext()):  # as kernel.build's own compile does
            # with the engine's launch bound, which sets the registers a thread
            ptx, _ = cuda.compile_ptx(kern.py_func, sig, cc=(9, 0), lineinfo=sass,
                                      launch_bounds=(128, kernel.blocks_per_sm(128)))
        with tempfile.TemporaryDirectory() as d:
            with open(f"{d}/k.ptx", "w") as f:
                f.write(ptx)
            out = subprocess.run([ptxas, "-v", *(["-lineinfo"] if sass else []), "-arch=sm_90",
                                  "-c", f"{d}/k.ptx", "-o", f"{d}/k.cubin"], check=True,
                                 capture_output=True, text=True)
            with open(f"{d}/k.cubin", "rb") as f:
                print(spec, text_fingerprint(f.read()), f"{time.time() - t:.0f} s", flush=True)
            print("   ", resources(out.stderr), flush=True)
            if sass:
                print_sass(f"{d}/k.cubin")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
