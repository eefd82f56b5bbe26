"""Building a published code once per machine and commit, into ``resources/engines/``.

``<engines>/<code>-<commit12>/`` holds the unpacked, patched tree (``src/``), the build's
log (``build.log``: the tool checks, every command and its output) and its receipt
(``build.json``), written last:

* ``ok``: the program is ``binary``;
* ``skipped``: a tool the code needs is not here (``reason``, one line: ``no nvcc/GPU
  (nvcc not on PATH)``); its runs are ``skipped`` rows with that reason;
* ``failed``: the source could not be had, a patch did not apply or a command failed
  (``reason``, one line naming the code and its log); its runs are ``error`` rows.

The receipt records what was built (commit, tree digest, patches' digests), so that a build
of other sources is never taken for this one (:func:`current`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mbebench.atomic import write_json
from mbebench.published import fetch
from mbebench.published.codes import Code

PATCHES = Path(__file__).with_name("patches")
BUILD_TIMEOUT_S = 3600.0


def build_dir(root: str | Path, code: Code) -> Path:
    return Path(root) / code.build_dir


def receipt_path(root: str | Path, code: Code) -> Path:
    return build_dir(root, code) / "build.json"


def patch_folder(code: Code) -> Path:
    return Path(code.patch_dir) if code.patch_dir else PATCHES


def patch_digests(code: Code) -> dict[str, str]:
    folder = patch_folder(code)
    return {p: hashlib.sha256((folder / p).read_bytes()).hexdigest() for p in code.patches}


def gpu_missing() -> str | None:
    """Why a GPU code cannot run here, or None."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no nvcc/GPU (nvidia-smi not found)"
    try:
        listed = subprocess.run([smi, "-L"], check=False, capture_output=True, text=True,
                                timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        listed = ""
    return None if "GPU" in listed else "no nvcc/GPU (nvidia-smi lists no GPU)"


def missing_tools(needs: tuple[str, ...]) -> str | None:
    """A one-line reason when a tool the build needs is not here, else None.

    A GPU code is not built on a machine without a GPU (its build takes minutes and its
    runs would be skipped); a run checks the GPU again (``engine``)."""
    if "nvcc" in needs and shutil.which("nvcc") is None:
        return "no nvcc/GPU (nvcc not on PATH)"
    if "gpu" in needs:
        why = gpu_missing()
        if why:
            return why
    if "cxx" in needs and shutil.which(os.environ.get("CXX", "g++")) is None:
        return f"no C++ compiler ({os.environ.get('CXX', 'g++')} not on PATH)"
    if "cmake" in needs and shutil.which("cmake") is None:
        return "no cmake on PATH"
    if "tbb" in needs and not _has_tbb():
        return "no TBB (libtbb-dev: tbb/ headers and libtbb not found)"
    return None


def _has_tbb() -> bool:
    """TBB's headers and library where the compiler looks by default (or CPATH/LIBRARY_PATH),
    as a Debian/Ubuntu libtbb-dev or a conda tbb-devel installs them."""
    inc = [*os.environ.get("CPATH", "").split(os.pathsep), "/usr/include", "/usr/local/include",
           os.path.join(sys.prefix, "include")]
    lib = [*os.environ.get("LIBRARY_PATH", "").split(os.pathsep), "/usr/lib/x86_64-linux-gnu",
           "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib",
           os.path.join(sys.prefix, "lib")]
    header = any(d and (Path(d) / "oneapi" / "tbb.h").is_file() for d in inc)
    library = any(d and any(Path(d).glob("libtbb.so*")) for d in lib)
    return header and library


def current(root: str | Path, code: Code, receipt: dict | None = None) -> bool:
    """Whether the receipt there is of this code's pinned commit and patches."""
    r = receipt if receipt is not None else fetch.read_receipt(receipt_path(root, code))
    return bool(r) and r.get("commit") == code.repo.commit \
        and r.get("patches") == patch_digests(code)


def build(code: Code, root: str | Path, *, jobs: int = 1, retry: str = "0",
          timeout_s: float = BUILD_TIMEOUT_S) -> dict:
    """Unpack, patch and build ``code`` from its downloaded archive; write and return the
    receipt (see the module doc; ``retry``: the pipeline's retry token, kept in it).  Never
    raises for the code's own failures."""
    out = build_dir(root, code)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "build.log"
    receipt = {"code": code.name, "repo": f"{code.repo.owner}/{code.repo.name}",
               "commit": code.repo.commit, "patches": patch_digests(code),
               "needs": list(code.needs), "log": str(log_path), "retry": retry}
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        reason = missing_tools(code.needs)
        if reason:
            log.write(f"{code.name}: skipped: {reason}\n")
            receipt.update(status="skipped", reason=reason)
        else:
            receipt.update(_build(code, root, out, log, jobs, timeout_s, log_path))
    receipt["seconds"] = round(time.monotonic() - t0, 3)
    write_json(receipt_path(root, code), receipt)
    return receipt


def _build(code, root, out: Path, log, jobs, timeout_s, log_path) -> dict:
    def failed(what: str) -> dict:
        log.write(f"FAILED: {what}\n")
        return {"status": "failed",
                "reason": f"build of {code.name} failed ({what}); see {log_path}"}

    source = fetch.read_receipt(fetch.receipt_path(root, code.repo))
    if not source or source.get("status") != "ok":
        why = (source or {}).get("reason", "no download receipt")
        log.write(f"source: {why}\n")
        return {"status": "failed",
                "reason": f"build of {code.name} failed: no source ({why})"}
    archive = fetch.archive_path(root, code.repo)
    try:
        digest = fetch.verify(archive, code.repo)
        tree = fetch.extract(archive, code.repo, out / "src")
    except (fetch.SourceError, OSError) as e:
        log.write(f"{e}\n")
        return failed("source not verified")
    log.write(f"{code.repo.owner}/{code.repo.name}@{code.repo.commit}: tree sha256 {digest}\n")
    for name in code.patches:
        diff = (patch_folder(code) / name).resolve()
        step = ["patch", "-p1", "--forward", "--batch", "-i", str(diff)]
        if _run(step, tree, log, timeout_s) != 0:
            return failed(f"patch {name} does not apply")
    env = {**os.environ, "MAKEFLAGS": f"-j{jobs}", "JOBS": str(jobs)}
    for command in code.build:
        if _run(["bash", "-euo", "pipefail", "-c", command], tree, log, timeout_s, env) != 0:
            return failed(f"command exited non-zero: {command[:60]}")
    binary = tree / code.binary
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        return failed(f"no program {code.binary} after the build")
    log.write(f"built {binary}\n")
    return {"status": "ok", "binary": str(binary.resolve()), "tree_sha256": digest,
            "compiler": _versions(code)}


def _run(argv: list[str], cwd: Path, log, timeout_s: float, env=None) -> int:
    log.write(f"$ {' '.join(argv)}\n")
    log.flush()
    try:
        proc = subprocess.run(argv, check=False, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                              env=env, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as e:
        log.write(f"{type(e).__name__}: {e}\n")
        return -1
    log.flush()
    return proc.returncode


def _versions(code: Code) -> dict[str, str]:
    tools = {"cxx": os.environ.get("CXX", "g++"), "nvcc": "nvcc", "cmake": "cmake"}
    out = {}
    for need, tool in tools.items():
        if need in code.needs:
            try:
                text = subprocess.run([tool, "--version"], check=False, capture_output=True,
                                      text=True, timeout=30).stdout
            except (OSError, subprocess.TimeoutExpired):
                continue
            lines = [ln for ln in text.splitlines() if ln.strip()]
            out[need] = lines[-1 if need == "nvcc" else 0] if lines else ""
    return out
