"""KONECT archive (or bare edge list) → binary CSR file + meta JSON.

The CSR is written first and the meta last, both atomically; if the meta
cannot be written the fresh CSR is removed again, so the pair on disk is
either complete or absent (Snakemake sees a failed job, not a half output).

Every failure is one line naming the dataset and the file it concerns,
including the ones Python would report without either: a full disk
(:class:`ConvertIOError`, an ``OSError``) and an allocation that fails
(:class:`ConvertMemoryError`, a ``MemoryError``).
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
import time
from pathlib import Path

from mbebench import csr
from mbebench.archive import DEFAULT_MAX_MEMBER_BYTES, ArchiveError, extract_edge_list
from mbebench.atomic import remove_stale_temps, write_json
from mbebench.konect import KonectMemoryError, KonectParseError, parse_edge_list
from mbebench.oneline import error_line


class ConvertError(ValueError):
    """Bad arguments, a wrong checksum or a graph the CSR format cannot hold; names the dataset."""


class ConvertIOError(OSError):
    """Reading or writing a file failed; the message names dataset and file."""


class ConvertMemoryError(MemoryError):
    """Out of memory; the message names dataset and file."""


# Already one line naming the dataset and file: passed on as they are.
_NAMED = (ConvertError, ConvertIOError, ConvertMemoryError, ArchiveError, KonectParseError,
          KonectMemoryError)


def convert(
    dataset: str,
    *,
    out_csr: Path,
    out_meta: Path,
    archive: Path | None = None,
    edges: Path | None = None,
    sha256: str | None = None,
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
    allow_non_bipartite: bool = False,
    retry: str | None = None,
    archive_sha256: str | None = None,
) -> dict:
    """Convert one dataset; return the meta dict that was written to ``out_meta``.

    ``archive_sha256`` (the download receipt's) is kept in the meta: the pipeline converts
    again when the receipt vouches for another archive (:func:`mbebench.dataset_status.converted`).

    The meta says ``"status": "ok"`` and keeps the pipeline's ``retry`` token
    (:mod:`mbebench.dataset_status`; a failure is recorded there with status ``unavailable``).

    ``source_sha256`` is the SHA-256 of the edge list file itself (the
    ``out.*`` member), so it identifies the graph whatever archive it came in;
    ``sha256``, when given, must equal it (checked before parsing).
    ``max_member_bytes`` bounds what is extracted from ``archive``;
    ``allow_non_bipartite`` accepts ``% sym``/``% asym`` files (see
    :mod:`mbebench.konect`).  Raises ``ArchiveError``, ``KonectParseError`` or
    one of this module's errors, each naming the dataset.
    """
    if (archive is None) == (edges is None):
        raise ConvertError(f"dataset {dataset!r}: give exactly one of archive= or edges=")
    t0 = time.perf_counter()
    out_csr, out_meta = Path(out_csr), Path(out_meta)
    want = sha256.strip().lower() if sha256 else None
    parse = {"allow_non_bipartite": allow_non_bipartite}
    with _naming(dataset, f"preparing the output folder {out_csr.parent}"):
        out_csr.parent.mkdir(parents=True, exist_ok=True)
        # What a killed convert left (kill -9): possibly a whole extracted edge list.
        for p in (out_csr, out_meta):
            remove_stale_temps(p)
    if archive is not None:
        archive = Path(archive)
        # Beside the output, not in /tmp: big edge lists may not fit a tmpfs.
        with tempfile.TemporaryDirectory(prefix=f".{out_csr.name}.", dir=out_csr.parent) as tmp:
            edge_file = Path(tmp) / "edges"
            with _naming(dataset, f"extracting the edge list of {archive} into {edge_file}"):
                try:
                    member = extract_edge_list(
                        archive, edge_file, dataset=dataset, max_member_bytes=max_member_bytes
                    )["member"]
                except ArchiveError as e:
                    raise _with_download_hint(e, archive) from None
            meta = _convert_file(dataset, edge_file, member, out_csr, want, parse)
    else:
        meta = _convert_file(dataset, Path(edges), Path(edges).name, out_csr, want, parse)
    meta["convert_s"] = round(time.perf_counter() - t0, 4)
    meta["status"] = "ok"
    if archive_sha256:
        meta["archive_sha256"] = archive_sha256
    if retry is not None:
        meta["retry"] = retry
    try:
        with _naming(dataset, f"writing {out_meta}"):
            write_json(out_meta, meta)
    except BaseException:
        out_csr.unlink(missing_ok=True)
        raise
    return meta


@contextlib.contextmanager
def _naming(dataset: str, action: str):
    """Give an OSError or MemoryError the dataset and the ``action`` (naming its files)."""
    try:
        yield
    except _NAMED:
        raise
    except MemoryError as e:
        raise ConvertMemoryError(
            f"dataset {dataset!r}: out of memory while {action} ({error_line(e)})"
        ) from None
    except OSError as e:
        detail = e.strerror or error_line(e)
        if e.filename and str(e.filename) not in action:
            detail += f" ({e.filename})"
        raise ConvertIOError(f"dataset {dataset!r}: {action} failed: {detail}") from None


def _with_download_hint(e: ArchiveError, archive: Path) -> ArchiveError:
    # A download kept by an older version (which did not check archives) would
    # otherwise fail here on every run: say how to get rid of it.
    sidecar = archive.with_name(archive.name + ".sha256")
    if not sidecar.exists():
        return e
    hint = f"; delete it and {sidecar.name} to download it again"
    return ArchiveError(f"{e}{hint}", reason=f"{e.reason}{hint}", truncated=e.truncated)


def _convert_file(
    dataset: str, edge_file: Path, source: str, out_csr: Path, want: str | None, parse: dict
) -> dict:
    with _naming(dataset, f"reading {edge_file}"):
        digest = _sha256(edge_file)
    if want and digest != want:
        raise ConvertError(
            f"dataset {dataset!r}: {edge_file}: sha256 mismatch: expected {want}, got {digest}"
        )
    t0 = time.perf_counter()
    el = parse_edge_list(edge_file, dataset=dataset, **parse)
    parse_s = time.perf_counter() - t0
    with _naming(dataset, f"building the CSR for {out_csr}"):
        try:
            graph = csr.from_sorted_edges(el.left, el.right, el.n_left, el.n_right)
        except ValueError as e:
            raise ConvertError(f"dataset {dataset!r}: cannot build CSR: {e}") from None
    meta = {
        "dataset": dataset,
        "n_left": el.n_left,
        "n_right": el.n_right,
        "n_edges": el.n_edges,
        "n_lines": el.n_lines,
        "n_duplicates": el.n_duplicates,
        "header": el.header,
        "source": source,
        "source_sha256": digest,
        "parse_s": round(parse_s, 4),
        "csr_format_version": csr.FORMAT_VERSION,
    }
    del el
    with _naming(dataset, f"writing {out_csr}"):
        csr.write_csr(graph, out_csr)
    return meta


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
