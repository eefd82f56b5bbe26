"""The published MBE codes, declared once each: where the source is, how it is built and run.

A :class:`Code` says everything the pipeline needs to fetch, verify, patch, build and run one
published implementation; :data:`CODES` holds the four this benchmark knows, and each one's
:class:`~mbebench.spec.EngineSpec` (``SPECS``) is registered in :data:`mbebench.engine.ENGINES`
like any engine, off until its config section says ``enabled: true``.

Nothing here imports anything heavy: the Snakefile reads the specs on every start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mbebench.spec import EngineSpec, Param

GITHUB = "https://github.com/"
# what a code may need (build.missing_tools checks each; "gpu" again when a run starts)
NEEDS = ("cxx", "cmake", "tbb", "nvcc", "gpu")


@dataclass(frozen=True)
class Repo:
    """One public GitHub repository at one commit.

    GitHub serves ``<owner>/<repo>/archive/<commit>.tar.gz`` with one top folder
    ``<repo>-<commit>/`` and the commit id in the tar's pax global header (what
    ``git get-tar-commit-id`` reads).  GitHub does not promise the archive's bytes stay
    the same over time, so the archive is verified by its commit (header and top folder)
    and by ``tree_sha256``, a digest of the contents of the files a build reads (see
    :func:`mbebench.published.fetch.tree_digest`); ``archive_sha256`` is checked as well
    when given.
    """

    owner: str
    name: str
    commit: str
    tree_paths: tuple[str, ...]  # folders/files (relative to the top folder) the digest covers
    tree_sha256: str
    tree_exclude: tuple[str, ...] = ()  # prefixes inside tree_paths left out (unused binaries)
    archive_sha256: str | None = None

    @property
    def slug(self) -> str:
        return f"{self.owner}+{self.name}-{self.commit}"

    @property
    def top(self) -> str:
        return f"{self.name}-{self.commit}"

    def url(self, base: str = GITHUB) -> str:
        """The archive's address under ``base`` (GitHub, a ``file://`` mirror, a folder)."""
        sep = "" if base.endswith("/") else "/"
        return f"{base}{sep}{self.owner}/{self.name}/archive/{self.commit}.tar.gz"


@dataclass(frozen=True)
class Code:
    """One published program: its repository, patches, build, input and output."""

    name: str  # the engine's name (config key, row "engine")
    title: str
    repo: Repo
    needs: tuple[str, ...]  # of NEEDS
    build: tuple[str, ...]  # bash commands, run in the patched tree ($JOBS: parallel jobs)
    binary: str  # the program, relative to the tree, after the build
    # argv after the program; {input} is the graph file, other fields are the run's params
    argv: Any  # a function params -> list[str] (templates with {input})
    input: str  # "adj" or "bi" (mbebench.published.inputs)
    output: str  # the parser of its stdout (mbebench.published.output.PARSERS)
    count_bits: int = 64  # the width it counts (or prints) its count in
    patches: tuple[str, ...] = ()  # diffs applied with patch -p1, in this order
    patch_dir: str | None = None  # where they are; None: mbebench/published/patches
    cwd_dirs: tuple[str, ...] = ()  # folders the program writes into, made in its run folder
    doc: str = ""

    @property
    def build_dir(self) -> str:
        """Relative to the engines folder: one build per code and commit."""
        return f"{self.name}-{self.repo.commit[:12]}"

    def args(self, params: Mapping[str, Any], input_file: str) -> list[str]:
        return [a.format(input=input_file) for a in self.argv(params)]


ADAMBE_REPO = Repo(
    "ISCS-ZJU", "AdaMBE", "4b56cfaa6a9e71e1aee0b369b015f4cd3f41934e",
    tree_paths=("src", "baselines/oombea"),
    # the bundled TBB binaries: the build links the system's TBB instead
    tree_exclude=("src/oneTBB/lib",),
    tree_sha256="4750983c150421a2748f5a15c653e79089436ae1d53a99d0e062086b0453d3f5",
)
GMBE_REPO = Repo(
    "ISCS-ZJU", "GMBE", "205b7cd53db3e6a08c1bb8016bfe22dfe321f10f",
    tree_paths=("src",),
    tree_sha256="ca4d6a3229c9d9c7b221d87a91f422233e3b397d8871dffbaa4c7004d7c97325",
)
CUMBE_REPO = Repo(
    "NTUDDSNLab", "cuMBE", "2fff8005b2f74e5683d915f9cd817409f6499bcf",
    tree_paths=("src", "makefile"),
    tree_sha256="aa6ebe496a29ef5a5f2b05031e4796c5fa9babbc464eafb3698449fd07244eb3",
)


def _adambe_argv(params: Mapping[str, Any]) -> list[str]:
    # -s 7: serial AdaMBE; -s 8: ParAdaMBE (with -t 1 it does not finish, so 1 thread is -s 7)
    threads = int(params.get("threads", 1))
    if threads == 1:
        return ["-i", "{input}", "-s", "7"]
    return ["-i", "{input}", "-s", "8", "-t", str(threads)]


def _gmbe_argv(params: Mapping[str, Any]) -> list[str]:
    devices = int(params.get("devices", 1))
    if devices == 1:
        return ["-i", "{input}", "-s", "2", "-f"]
    return ["-i", "{input}", "-s", "3", "-x", str(devices), "-f"]


_SM_COUNT = """cd src && cat > sm_count.cu <<'END'
#include <cstdio>
int main() {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 1;
  printf("%d\\n", p.multiProcessorCount);
}
END
nvcc -o sm_count sm_count.cu && ./sm_count > sm_count.txt && cat sm_count.txt"""

# Builds call the compilers directly rather than the repositories' CMake files: GMBE's uses
# FindCUDA (gone from CMake >= 3.27) and a CUB submodule GitHub's archive leaves out (the CUDA
# toolkit ships CUB); AdaMBE's links its bundled TBB binary, ours the system's libtbb.
CODES: dict[str, Code] = {c.name: c for c in (
    Code(
        name="adambe", title="AdaMBE", repo=ADAMBE_REPO, needs=("cxx", "tbb"),
        build=(("cd src && ${CXX:-g++} -O3 -std=c++14 -o MBE_ALL BicliqueFinder.cpp BiGraph.cpp "
                "Utility.cpp BaselineFinder.cpp AdaFinder.cpp ParAdaFinder.cpp main.cpp -ltbb "
                "-lpthread"),),
        binary="src/MBE_ALL", argv=_adambe_argv, input="adj", output="adambe", count_bits=64,
        doc="AdaMBE (ISCS-ZJU/AdaMBE, VLDB'24): serial (-s 7) or ParAdaMBE with N threads "
            "(-s 8 -t N), TBB.",
    ),
    Code(
        name="oombea", title="ooMBE", repo=ADAMBE_REPO, needs=("cxx",),
        build=(("cd baselines/oombea && ${CXX:-g++} -O3 -std=c++14 -o mbbp main.cpp bgraph.cpp "
                "Utility.cpp basicEnu.cpp denseMBB.cpp LCUtility.cpp basicEnuSet.cpp UniCore.cpp "
                "BiCore.cpp mBBE.cpp ooMBE.cpp"),),
        binary="baselines/oombea/mbbp", argv=lambda params: ["{input}"], input="adj",
        # it counts in an unsigned long but prints the count with %d
        output="oombea", count_bits=32,
        doc="ooMBEA (Chen et al., PVLDB'22), the copy in AdaMBE's baselines/oombea; serial.",
    ),
    Code(
        name="gmbe", title="GMBE", repo=GMBE_REPO, needs=("nvcc", "gpu"),
        # its grid is MAX_SM blocks: the SM count of this machine's GPU 0, as its CMake
        # file's per-GPU presets set it
        build=(_SM_COUNT,
               ("cd src && nvcc -O3 -w -arch=${CUDA_ARCH:-native} -DMAX_SM=$(cat sm_count.txt) "
                "-DADV_UNION -DMAX_2_H_DEGREE_BOUND=0x40000 -DMAX_DEGREE_BOUND=0x25000 "
                "-DBLOCKS_PER_SM=1 -DPRUNE_EN -rdc=true -o MBE_GPU BicliqueFinder.cu BiGraph.cu "
                "main.cu Utility.cu IterFinderGpu.cu -lcudadevrt")),
        binary="src/MBE_GPU", argv=_gmbe_argv, input="adj", output="gmbe", count_bits=32,
        patches=("gmbe-cuda13.patch",),
        doc="GMBE (ISCS-ZJU/GMBE, SC'23) with -s 2 -f; -s 3 -x N on N GPUs (devices).",
    ),
    Code(
        name="cumbe_orig", title="cuMBE (orig.)", repo=CUMBE_REPO, needs=("nvcc", "gpu"),
        build=("nvcc -O3 -arch=${CUDA_ARCH:-native} -I. -o bin_mbe src/main.cu",),
        binary="bin_mbe", argv=lambda params: ["{input}", "cuMBE"], input="bi",
        output="cumbe_orig", count_bits=32, patches=("cumbe-cuda13.patch",),
        cwd_dirs=("result",),
        doc="The cuMBE paper's own CUDA code (NTUDDSNLab/cuMBE), variant cuMBE.",
    ),
)}


def _gpus_of(params: Mapping[str, Any]) -> int:
    return int(params.get("devices", 1))


def _spec(code: Code, params: tuple[Param, ...] = (), **extra: Any) -> EngineSpec:
    gpu = "gpu" in code.needs
    return EngineSpec(
        name=code.name, title=code.title, entry=f"mbebench.published.engine:{code.name}",
        doc=code.doc + " Published code, fetched and built by the pipeline (docs/published.md); "
                       "count only.",
        params=params, gpu=gpu, enabled=False, **extra,
    )


SPECS: dict[str, EngineSpec] = {
    "adambe": _spec(CODES["adambe"], (
        Param("threads", int, 1, minimum=1, short="t", fit_cores=True,
              doc="1: serial AdaMBE (-s 7); N > 1: ParAdaMBE with N TBB threads (-s 8 -t N)."),
    ), cpus="threads"),
    "oombea": _spec(CODES["oombea"]),
    "gmbe": _spec(CODES["gmbe"], (
        Param("devices", int, 1, minimum=1,
              doc="GPUs: 1 runs -s 2 -f; N > 1 runs GMBE's multi-GPU mode (-s 3 -x N)."),
    ), gpus=_gpus_of),
    "cumbe_orig": _spec(CODES["cumbe_orig"]),
}
ADAMBE, OOMBEA, GMBE, CUMBE_ORIG = (SPECS[n] for n in ("adambe", "oombea", "gmbe", "cumbe_orig"))

