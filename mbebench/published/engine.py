"""A run of a published code on one graph: the engine function of its spec.

The function writes the graph in the code's format from the CSR (same vertex ids) into a
fresh folder with a short path (AdaMBE and GMBE copy the file name into an 80-byte buffer),
runs the built program there, and reads its count and its own time.  Its count is cross-
checked like any engine's; it prints no fingerprint, so the row's is null ("count only").
``stats.process_wall_s`` is our wall time around the program (file writing excluded);
``algo_seconds`` is the time the program reports.

The build comes from ``resources/engines/`` under the working directory, or the folder
``MBEBENCH_ENGINES_DIR`` names.  A build that was skipped makes the run ``skipped`` with
its reason, a failed one an error naming its log; so does a GPU code on a machine without
a GPU.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mbebench import paths
from mbebench.csr import CSRGraph
from mbebench.engine import EngineResult, EngineSkipped
from mbebench.published import build, fetch, inputs, output
from mbebench.published.codes import CODES, Code

ENGINES_DIR = paths.ENGINES


class PublishedError(RuntimeError):
    """The code's build is missing or failed, or its run failed; one line."""


def engines_dir() -> Path:
    return Path(os.environ.get("MBEBENCH_ENGINES_DIR") or ENGINES_DIR)


def binary_of(code: Code, root: Path) -> Path:
    """The built program; EngineSkipped / PublishedError when there is none to run."""
    receipt = fetch.read_receipt(build.receipt_path(root, code))
    if receipt is None:
        raise PublishedError(f"{code.name}: not built (no {build.receipt_path(root, code)}); "
                             "the pipeline's published_build step builds it")
    if not build.current(root, code, receipt):
        raise PublishedError(f"{code.name}: the build in {build.build_dir(root, code)} is not "
                             "of the pinned commit and patches; build it again")
    if receipt.get("status") == "skipped":
        raise EngineSkipped(receipt.get("reason") or "build skipped")
    if receipt.get("status") != "ok":
        raise PublishedError(receipt.get("reason") or f"build of {code.name} failed")
    return Path(receipt["binary"])


def run_code(code: Code, graph: CSRGraph, params: dict[str, Any],
             root: Path | None = None) -> EngineResult:
    program = binary_of(code, root or engines_dir())
    if "gpu" in code.needs:
        why = build.gpu_missing()
        if why:
            raise EngineSkipped(why)
    with tempfile.TemporaryDirectory(prefix="mbe") as tmp:
        work = Path(tmp)
        graph_file = f"g.{code.input}"
        inputs.write(graph, code.input, work / graph_file)
        for folder in code.cwd_dirs:
            (work / folder).mkdir()
        argv = [str(program), *code.args(params, graph_file)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(argv, check=False, cwd=work, capture_output=True, text=True,
                                  errors="replace")
        except OSError as e:
            raise PublishedError(f"{code.name}: cannot run {program}: {e}") from None
        wall = time.perf_counter() - t0
    # the run's log keeps everything the program said
    sys.stderr.write(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        last = next((ln.strip() for ln in reversed(proc.stderr.splitlines()) if ln.strip()), "")
        raise PublishedError(f"{code.name} exited with code {proc.returncode}"
                             + (f": {last[:200]}" if last else ""))
    try:
        count, seconds = output.PARSERS[code.output](proc.stdout)
    except output.OutputError as e:
        raise PublishedError(f"{code.name}: {e}") from None
    count = output.check_width(code.name, count, code.count_bits)
    return EngineResult(count=count, fingerprint=None, algo_seconds=seconds,
                        stats={"process_wall_s": wall, "count_only": True,
                               "count_bits": code.count_bits, "commit": code.repo.commit})


def adambe(graph: CSRGraph, threads: int = 1) -> EngineResult:
    """AdaMBE (1 thread) or ParAdaMBE (``threads`` TBB threads) on ``graph``."""
    return run_code(CODES["adambe"], graph, {"threads": threads})


def oombea(graph: CSRGraph) -> EngineResult:
    """ooMBEA on ``graph``."""
    return run_code(CODES["oombea"], graph, {})


def gmbe(graph: CSRGraph, devices: int = 1) -> EngineResult:
    """GMBE on ``graph``, on ``devices`` GPUs."""
    return run_code(CODES["gmbe"], graph, {"devices": devices})


def cumbe_orig(graph: CSRGraph) -> EngineResult:
    """The original cuMBE (its cuMBE variant) on ``graph``."""
    return run_code(CODES["cumbe_orig"], graph, {})
