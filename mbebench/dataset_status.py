"""Whether a dataset could be downloaded and converted, and retrying it when not.

A dataset whose download or convert fails for a reason of its own (the archive
is gone, the server is down, the edge list is malformed, a ``path:`` file is
missing) must not cost the whole result: the step then *records* the failure
instead of failing its job.  The download writes a receipt
(``resources/downloads/<dataset>.json``) and the convert step its meta
(``results/csr/<dataset>.json``) with ``"status": "unavailable"`` and the
one-line reason; the engine runs of the dataset become ``unavailable`` rows;
tables, plots and the report are built from what ran and list the unavailable
datasets; the final check (``python -m mbebench check``) fails naming them, so
the run still ends with a non-zero exit status.

Retrying: both steps take a ``retry`` parameter (:func:`retry_token`) and write
it into their status file.  While the file says ``ok`` the token is the one
the step ran with, so Snakemake's params trigger leaves the job alone; when it
says ``unavailable`` (or the convert step's CSR file is missing) the token is
the next number, the params differ from those recorded, and Snakemake runs the
step again, and everything after it.  So every run retries the unavailable
datasets, and a dataset that recovers is not redone once more afterwards.

A bug (any other exception) or an interrupt still fails the job: only the
expected, one-line errors of a step are a dataset's fault.
"""

from __future__ import annotations

import json
import os
import posixpath
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mbebench import atomic

OK = "ok"
UNAVAILABLE = "unavailable"

# The errors that are about the dataset (named, not imported: this module is read by the
# Snakefile on every start and must not pull in the ingest code).
DOWNLOAD_ERRORS = frozenset({"DownloadError", "ArchiveError"})
CONVERT_ERRORS = frozenset({"ConvertError", "ConvertIOError", "ConvertMemoryError",
                            "ArchiveError", "KonectParseError", "KonectMemoryError"})


def is_dataset_error(exc: BaseException, names: Iterable[str]) -> bool:
    names = set(names)
    return any(c.__name__ in names for c in type(exc).__mro__)


def read_status(path: str | os.PathLike) -> dict[str, Any] | None:
    """The JSON object of a receipt or meta file, or None when it is missing or unreadable."""
    try:
        obj = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def unavailable_reason(path: str | os.PathLike) -> str | None:
    """None when the status file says the step worked (files written before statuses
    existed say nothing, and worked); else the recorded reason."""
    st = read_status(path)
    if st is None:
        return f"{path}: missing or unreadable"
    if st.get("status", OK) == OK:
        return None
    return str(st.get("reason") or "unavailable")


def retry_token(path: str | os.PathLike, need: Iterable[str | os.PathLike] = ()) -> str:
    """The ``retry`` param of a download or convert job (see the module doc): unchanged
    while ``path`` says ok and every ``need`` file exists, the next number otherwise."""
    st = read_status(path)
    if st is None:
        return "0"  # the job runs anyway: its output is missing
    try:
        n = int(st.get("retry", 0))
    except (TypeError, ValueError):
        n = 0
    good = st.get("status", OK) == OK and all(Path(p).exists() for p in need)
    return str(n if good else n + 1)


class Untracked:
    """A rule param that Snakemake passes to the shell command but does not record.

    Snakemake re-runs a job when a recorded param changes, and it records only plain
    values (str, numbers, containers); any other object is left out of the comparison.
    Where an archive is fetched from (``konect.base_url``, a ``file://`` URL or the same
    mirror as a plain path), timeouts, retries and size limits say nothing about the
    content of a finished download, so they go in one of these: pointing the pipeline at
    another mirror, or forgetting the mirror, must not redo finished datasets.
    """

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    def __repr__(self) -> str:
        return f"Untracked({self.value!r})"


def archive_sha256(receipt: str | os.PathLike) -> str:
    """The SHA-256 of the archive a download receipt vouches for ("" when there is none)."""
    st = read_status(receipt) or {}
    if st.get("status", OK) != OK:
        return ""
    return str(st.get("sha256") or "")


def archive_name(location: str) -> str:
    """The file name of an archive's URL or path (KONECT's ``download.tsv.<name>.tar.bz2``):
    what is fetched, apart from where from."""
    path = urllib.parse.urlsplit(location).path if "://" in location else location
    return posixpath.basename(path.replace(os.sep, "/").rstrip("/")) or location


def converted(receipt: str | os.PathLike, meta: str | os.PathLike, graph: str | os.PathLike,
              sha256: str | None = None, name: str | None = None) -> bool:
    """Whether a downloaded dataset is finished: its receipt and meta say ok, the receipt's
    archive is the one the config names (file ``name`` and ``sha256``, where given) and the
    one the CSR was converted from (metas written before they recorded it are taken at their
    word), and the CSR is there."""
    got = archive_sha256(receipt)
    fetched = (read_status(receipt) or {}).get("url")
    st = read_status(meta) or {}
    return (bool(got) and (not sha256 or got == sha256.strip().lower())
            and (not name or not fetched or archive_name(str(fetched)) == name)
            and st.get("status", OK) == OK and st.get("archive_sha256", got) == got
            and Path(graph).exists())


def write_unavailable(path: str | os.PathLike, *, dataset: str, step: str, reason: str,
                      retry: str | None) -> dict[str, Any]:
    """Record that ``step`` (download, convert) failed for ``dataset``; ``reason`` is kept as
    one line."""
    obj = {"dataset": dataset, "status": UNAVAILABLE, "step": step,
           "reason": " ".join(str(reason).split()), "retry": retry or "0"}
    atomic.write_json(path, obj)
    return obj


def write_receipt(path: str | os.PathLike, info: dict[str, Any], *, dataset: str,
                  retry: str | None) -> dict[str, Any]:
    """The download's receipt of a good archive (what :func:`mbebench.download.fetch` returned)."""
    obj = {"dataset": dataset, "status": OK, **info, "retry": retry or "0"}
    atomic.write_json(path, obj)
    return obj


def unavailable_datasets(meta_paths: Iterable[str | os.PathLike]) -> dict[str, str]:
    """dataset -> reason, for the meta files (``results/csr/<dataset>.json``) that say
    unavailable; the dataset is the file's stem."""
    out = {}
    for p in meta_paths:
        reason = unavailable_reason(p)
        if reason is not None:
            out[Path(p).stem] = reason
    return out


def graph_sizes(meta_paths: Iterable[str | os.PathLike]) -> dict[str, dict[str, int]]:
    """dataset -> {n_left, n_right, n_edges} from the meta files that hold them."""
    out = {}
    for p in meta_paths:
        st = read_status(p) or {}
        if st.get("status", OK) == OK and all(
                isinstance(st.get(k), int) for k in ("n_left", "n_right", "n_edges")):
            out[str(st.get("dataset") or Path(p).stem)] = {
                k: int(st[k]) for k in ("n_left", "n_right", "n_edges")}
    return out
