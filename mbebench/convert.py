"""KONECT archive (or bare edge list) → binary CSR file + meta JSON.

The CSR is written first and the meta last, both atomically; if the meta
cannot be written the fresh CSR is removed again, so the pair on disk is
either complete or absent (Snakemake sees a failed job, not a half output).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path

from mbebench import csr
from mbebench.archive import extract_edge_list
from mbebench.atomic import write_json
from mbebench.konect import parse_edge_list


class ConvertError(ValueError):
    """Bad arguments or a graph the CSR format cannot hold; names the dataset."""


def convert(
    dataset: str,
    *,
    out_csr: Path,
    out_meta: Path,
    archive: Path | None = None,
    edges: Path | None = None,
) -> dict:
    """Convert one dataset; return the meta dict that was written to ``out_meta``.

    ``source_sha256`` is the SHA-256 of the edge list file itself (the
    ``out.*`` member), so it identifies the graph whatever archive it came in.
    Raises ``ArchiveError``, ``KonectParseError`` or :class:`ConvertError`,
    each naming the dataset.
    """
    if (archive is None) == (edges is None):
        raise ConvertError(f"dataset {dataset!r}: give exactly one of archive= or edges=")
    t0 = time.perf_counter()
    out_csr, out_meta = Path(out_csr), Path(out_meta)
    if archive is not None:
        out_csr.parent.mkdir(parents=True, exist_ok=True)
        # Beside the output, not in /tmp: big edge lists may not fit a tmpfs.
        with tempfile.TemporaryDirectory(prefix=f".{out_csr.name}.", dir=out_csr.parent) as tmp:
            edge_file = Path(tmp) / "edges"
            source = extract_edge_list(Path(archive), edge_file, dataset=dataset)["member"]
            meta = _convert_file(dataset, edge_file, source, out_csr)
    else:
        meta = _convert_file(dataset, Path(edges), Path(edges).name, out_csr)
    meta["convert_s"] = round(time.perf_counter() - t0, 4)
    try:
        write_json(out_meta, meta)
    except BaseException:
        out_csr.unlink(missing_ok=True)
        raise
    return meta


def _convert_file(dataset: str, edge_file: Path, source: str, out_csr: Path) -> dict:
    t0 = time.perf_counter()
    el = parse_edge_list(edge_file, dataset=dataset)
    parse_s = time.perf_counter() - t0
    try:
        graph = csr.from_edges(el.left, el.right, el.n_left, el.n_right)
    except ValueError as e:
        raise ConvertError(f"dataset {dataset!r}: cannot build CSR: {e}") from None
    csr.write_csr(graph, out_csr)
    return {
        "dataset": dataset,
        "n_left": el.n_left,
        "n_right": el.n_right,
        "n_edges": el.n_edges,
        "n_lines": el.n_lines,
        "n_duplicates": el.n_duplicates,
        "header": el.header,
        "source": source,
        "source_sha256": _sha256(edge_file),
        "parse_s": round(parse_s, 4),
        "csr_format_version": csr.FORMAT_VERSION,
    }


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
