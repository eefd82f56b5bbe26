"""The paper datasets of the local KONECT mirror, converted once into a cache.

Shared by the benchmark scripts; the paper-name -> KONECT-name mapping comes
from config/config.yaml, so it is written down only once.
"""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO.parent / "shared" / "konect-mirror"


def mirror_datasets(mirror: Path = DEFAULT_MIRROR) -> dict[str, str]:
    """paper name -> KONECT name for the config's datasets that the mirror holds, small first."""
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    present = {
        name: entry["konect"]
        for name, entry in cfg["datasets"].items()
        if (mirror / f"download.tsv.{entry['konect']}.tar.bz2").is_file()
    }
    size = {n: (mirror / f"download.tsv.{k}.tar.bz2").stat().st_size for n, k in present.items()}
    return dict(sorted(present.items(), key=lambda kv: size[kv[0]]))


def cached_csr(name: str, konect: str, mirror: Path, cache: Path) -> Path:
    """The dataset's CSR file in ``cache``, converted from the mirror archive if missing."""
    out_csr = cache / f"{name}.csr"
    if not out_csr.exists():
        from mbebench.convert import convert

        cache.mkdir(parents=True, exist_ok=True)
        convert(
            name,
            out_csr=out_csr,
            out_meta=cache / f"{name}.meta.json",
            archive=mirror / f"download.tsv.{konect}.tar.bz2",
        )
    return out_csr
