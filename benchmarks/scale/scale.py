"""cuMBE at scale: tiles of real graphs, planted near-bicliques and crowns (run on a GPU machine).

    python benchmarks/scale/scale.py --archives konect-mirror/ --out scale-out \\
        [--gmbe resources/engines/gmbe-205b7cd53db3/src/src/MBE_GPU] \\
        [--cumbe-orig resources/engines/cumbe_orig-2fff8005b2f7/src/bin_mbe] \\
        [--time-limit 120] [--graphs marvel-x12,planted-s]

Makes the graphs (cached in --work), runs cuMBE's paper build (or the --variants given), then
cuMBE with the maximality check in rounds (``--rounds``; ``--no-rounds``: not), on each
(``python -m cumbe run``, one process per run under --time-limit; the kernel is compiled before
its run is timed: numba's cache, then ``kernel_s``), and GMBE (``-s 2 -f``) and the original
cuMBE when their binaries are given (the pipeline's builds: ``python -m mbebench.published``;
each on the pipeline's input for it, its own time), and writes OUT/scale.json and
OUT/scale.md: kernel seconds, bicliques/s, the ratio to each published code's time and
whether the counts agree, with the commit and the GPU.

Graphs (``--graphs``, comma list; default: every one below):

* ``<konect>-x<T>``: the KONECT graph tiled T times (T disjoint copies), then 1 % of its edges
  rewired between copies (each picked edge keeps its left vertex and moves its right end to
  the same vertex of a random copy; duplicates dropped), e.g. ``movielens-10m_ui-x20``;
* ``planted-<grade>``: a Chung-Lu graph with planted near-bicliques (benchmarks/standins.py),
  grades xs < s < m < l (more blocks, larger pools), then l's blocks on ever heavier hubs:
  xl (degree caps 20,000 / 40,000), xxl (and power-law exponent 2.2), xxxl (2.1, no caps);
  ``planted-<grade>-e<exponent>`` is that grade with another exponent (xl is 2.5, xxl 2.2:
  ``planted-xl-e2.3`` lies between them; the default runs e2.4, e2.3 and e2.29, the grade
  that took over 90 s with the kernel of issue 34's time and takes under 30 s now);
* ``crown-<n>`` (n x n minus a perfect matching: 2^n - 2 maximal bicliques) and
  ``crowns-<n>x<c>`` (c disjoint crowns).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from mbebench import progress  # noqa: E402
from mbebench.csr import CSRGraph, from_edges, read_csr, write_csr  # noqa: E402
from mbebench.published import inputs, output  # noqa: E402
from mbebench.published.codes import CODES  # noqa: E402

from benchmarks import standins  # noqa: E402
from cumbe import warm  # noqa: E402
from cumbe.spec import SPEC  # noqa: E402

DEFAULT_GRAPHS = ("marvel-x12", "marvel-x60", "youtube-groupmemberships-x10",
                  "movielens-10m_ui-x20", "edit-nawiki-x8", "planted-xs", "planted-s",
                  "planted-m", "planted-l", "planted-xl", "planted-xl-e2.4", "planted-xl-e2.3",
                  "planted-xl-e2.29",
                  "planted-xxl", "crown-22",
                  "crowns-18x8")
VARIANTS = ("cuMBE",)
PUBLISHED = ("gmbe", "cumbe_orig")
# planted grades: (|E| of the Chung-Lu graph, blocks, left sizes, right sizes, density, pools,
# power-law exponent, degree caps left / right).  The hubs set the hardness: on one H200,
# l 0.15 s, xl 0.29 s, xxl and xxxl past 70 s (benchmarks/scale/README.md)
_L_BLOCKS = (2_000_000, 2_000, (3, 8), (5, 15), (0.7, 1.0), (30_000, 10_000))
PLANTED = {
    "xs": (500_000, 200, (3, 6), (5, 10), (0.8, 1.0), (8_000, 3_000), 2.5, (2000, 4000)),
    "s": (1_000_000, 500, (3, 8), (5, 15), (0.7, 1.0), (15_000, 5_000), 2.5, (2000, 4000)),
    "m": (2_000_000, 1_000, (3, 8), (5, 15), (0.7, 1.0), (30_000, 10_000), 2.5, (2000, 4000)),
    "l": (*_L_BLOCKS, 2.5, (2000, 4000)),
    # l's graph and blocks, heavier hubs
    "xl": (*_L_BLOCKS, 2.5, (20_000, 40_000)),
    "xxl": (*_L_BLOCKS, 2.2, (20_000, 40_000)),
    "xxxl": (*_L_BLOCKS, 2.1, (200_000, 200_000)),
}


def edges_of(g: CSRGraph) -> tuple[np.ndarray, np.ndarray]:
    left = np.repeat(np.arange(g.n_left, dtype=np.int64), np.diff(g.left_offsets))
    return left, g.left_indices.astype(np.int64)


def tile(g: CSRGraph, times: int, rewire: float = 0.01, seed: int = 1) -> CSRGraph:
    """``times`` disjoint copies of g, then a share ``rewire`` of the edges moved between
    copies (the right end goes to the same vertex of a random copy)."""
    rng = np.random.default_rng(seed)
    left, right = edges_of(g)
    copy = np.repeat(np.arange(times, dtype=np.int64), left.size)
    lt = np.tile(left, times) + copy * g.n_left
    rt = np.tile(right, times)
    moved = rng.random(rt.size) < rewire
    copy[moved] = rng.integers(0, times, int(moved.sum()))
    rt = rt + copy * g.n_right
    key = np.unique(lt * (g.n_right * times) + rt)
    return from_edges(key // (g.n_right * times), key % (g.n_right * times),
                      g.n_left * times, g.n_right * times)


def planted(grade: str, seed: int = 1, exponent: float | None = None) -> CSRGraph:
    """Grade ``grade``'s graph; ``exponent`` replaces its power law's (a grade between two)."""
    if grade not in PLANTED:
        raise ValueError(f"unknown planted grade {grade!r} (known: {', '.join(PLANTED)})")
    m, nb, ls, rs, p, (pl, pr), own, (cl, cr) = PLANTED[grade]
    exponent = own if exponent is None else exponent
    if not 2.0 < exponent < 4.0:
        raise ValueError(f"planted-{grade}: power-law exponent {exponent} is outside (2, 4)")
    name = f"planted-{grade}" + ("" if exponent == own else f"-e{exponent:g}")
    params = standins.Params(preset=name, n_left=m // 4, n_right=m // 12,
                             n_edges=m, exponent_left=exponent, exponent_right=exponent,
                             cap_left=cl, cap_right=cr,
                             blocks=standins.Blocks(nb, ls, rs, p, pl, pr), seed=seed)
    return standins.generate(params)[0]


def make(name: str, archives: Path, work: Path) -> Path:
    """The graph ``name`` as a CSR file in ``work`` (made once)."""
    path = work / f"{name}.csr"
    if path.exists():
        return path
    work.mkdir(parents=True, exist_ok=True)
    if m := re.fullmatch(r"crown-(\d+)", name):
        g = standins.crown(int(m[1]))
    elif m := re.fullmatch(r"crowns-(\d+)x(\d+)", name):
        g = standins.crown_union(int(m[1]), int(m[2]))
    elif m := re.fullmatch(r"planted-(\w+?)(?:-e(\d+(?:\.\d+)?))?", name):
        g = planted(m[1], exponent=None if m[2] is None else float(m[2]))
    elif m := re.fullmatch(r"(.+)-x(\d+)", name):
        base = work / f"{m[1]}.csr"
        if not base.exists():
            arch = archives / f"download.tsv.{m[1]}.tar.bz2"
            subprocess.run([sys.executable, "-m", "mbebench", "convert", "--dataset", m[1],
                            "--archive", str(arch), "--out-csr", str(base), "--out-meta",
                            str(work / f"{m[1]}.json")], check=True, cwd=REPO)
        g = tile(read_csr(base), int(m[2]))
    else:
        raise ValueError(f"unknown graph {name!r}")
    write_csr(g, path)
    return path


def run_label(variant: str, blocks_per_sm: int) -> str:
    """A run's name in the table: the variant, and the launch bound when not the default."""
    return variant if not blocks_per_sm else f"{variant}, {blocks_per_sm} blocks/SM"


def run_cumbe(csr: Path, variant: str, limit: float, extra: list[str],
              blocks_per_sm: int = 0, env: dict | None = None, tree: Path | None = None) -> dict:
    """One ``python -m cumbe run`` of ``csr`` under ``limit`` seconds (``env``: variables
    set for it on top of this process's; ``tree``: the checkout whose cumbe runs, default
    this one): its count, fingerprint and kernel time, or what went wrong."""
    out = csr.with_suffix(f".{variant}" + (f".b{blocks_per_sm}" if blocks_per_sm else "")
                          + ".json")
    out.unlink(missing_ok=True)
    bound = ["--blocks-per-sm", str(blocks_per_sm)] if blocks_per_sm else []
    t = time.time()
    try:
        p = subprocess.run([sys.executable, "-m", "cumbe", "run", str(csr), "--variant", variant,
                            "--json", str(out), *bound, *extra], cwd=tree or REPO,
                           capture_output=True, text=True, timeout=limit,
                           env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired as e:
        # what it had found by then, from its progress lines (every 10 s by default)
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
        found = progress.found_so_far(err or "")
        return {"status": "timeout", "wall_s": round(time.time() - t, 1),
                **({"found": found[0], "rate": found[1]} if found else {})}
    if p.returncode or not out.exists():
        return {"status": "error", "error": (p.stderr or p.stdout)[-800:]}
    r = json.loads(out.read_text())
    st = r["stats"]
    return {"status": "ok", "count": int(r["count"]), "fingerprint": r["fingerprint"],
            "kernel_s": st["kernel_s"], "nodes": st.get("nodes"),
            "phases_s": st.get("phases_s"), "blocks": st.get("blocks")}


WARM_UP_GRAPH = "crown-8"
WARM_UP_LIMIT_S = 900.0


def builds(variants: list[str], bounds: list[int], instrument: bool, rounds: bool = False):
    """(row label, variant, extra arguments, launch bound) of every cuMBE run of a graph;
    ``rounds``: cuMBE with the maximality check in rounds too (``--rounds``), after it."""
    for v in variants:
        # (python -m cumbe run checks in rounds by default: the paper's rows say not to)
        for b in bounds:
            yield run_label(v, b), v, ["--no-rounds"], b
        if instrument:
            yield v + " (instr)", v, ["--instrument", "--no-rounds"], 0
        if rounds and v == "cuMBE":
            yield "cuMBE rounds", v, ["--rounds"], 0


def kernel_builds(variants: list[str], bounds: list[int], instrument: bool,
                  rounds: bool = False) -> list[str]:
    """The kernel builds (``cumbe.warm``'s names) that the runs of :func:`builds` may launch.
    A run with the check in rounds launches the build with hub rows or the one without, as
    the graph has rows or not (movielens-10m_ui x200 has none): a tiny graph's run compiles
    only one of the two."""
    threads = SPEC.defaults()["threads"]
    out = []
    for _, v, extra, b in builds(variants, bounds, instrument, rounds):
        if "--rounds" in extra:
            out += [warm.spec(v, threads, rounds=True, hubs=hubs) for hubs in (False, True)]
        else:
            out.append(warm.spec(v, threads, instr="--instrument" in extra, blocks_per_sm=b))
    return out


def warm_up(work: Path, variants: list[str], bounds: list[int], instrument: bool,
            rounds: bool = False) -> dict:
    """Every kernel build compiled and every run once on a tiny graph first, untimed: a
    fresh cache compiles the kernel and the host's numba functions in the first run that
    needs them (tens of seconds each), which would otherwise count against a graph's time
    limit (a cold compile timed out movielens-10m_ui x200's first run at 30 s)."""
    ok = warm.warm(kernel_builds(variants, bounds, instrument, rounds), os.cpu_count() or 1,
                   emit=lambda line: print(line, flush=True))
    csr = make(WARM_UP_GRAPH, Path("/nonexistent"), work)
    runs = {label: run_cumbe(csr, v, WARM_UP_LIMIT_S, extra, b)["status"]
            for label, v, extra, b in builds(variants, bounds, instrument, rounds)}
    return {**runs, "kernel builds": "ok" if ok else "error"}


def run_published(name: str, binary: str, g: CSRGraph, limit: float) -> dict:
    """A published code (``mbebench.published.codes``: gmbe, cumbe_orig) on the pipeline's
    input for it, in a run folder of its own with a short file name (GMBE copies it into an
    80-byte buffer), under ``limit``: its own time and count.  GMBE's input is line u = the
    right neighbours of left vertex u, as its own preprocess/data_convert.cpp writes a KONECT
    file: with the other orientation it took 5.0 s on marvel-x12, with this one 0.159 s."""
    code = CODES[name]
    with tempfile.TemporaryDirectory(prefix="mbe") as tmp:
        inputs.write(g, code.input, Path(tmp) / f"g.{code.input}")
        for folder in code.cwd_dirs:
            (Path(tmp) / folder).mkdir()
        t = time.time()
        try:
            # absolute: the program runs in the run folder, where a relative path fails
            p = subprocess.run([str(Path(binary).resolve()), *code.args({}, f"g.{code.input}")],
                               cwd=tmp, capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "wall_s": round(time.time() - t, 1)}
    try:
        if p.returncode:
            raise output.OutputError(f"exit status {p.returncode}")
        count, seconds = output.PARSERS[code.output](p.stdout)
    except output.OutputError as e:
        return {"status": "error", "error": f"{e}: {(p.stdout + p.stderr)[-800:]}"}
    return {"status": "ok", "seconds": seconds, "count": count}


def context() -> dict:
    def sh(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO).stdout.strip()
        except OSError:
            return ""
    # a run of uncommitted code must not pass for the commit's: "-dirty" as git describe says
    commit = sh("git", "describe", "--always", "--abbrev=7", "--dirty", "--exclude", "*")
    return {"commit": commit or os.environ.get("COMMIT", ""),
            "gpu": sh("nvidia-smi", "--query-gpu=name", "--format=csv,noheader"),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def table(res: dict) -> str:
    lines = [f"commit {res['context']['commit']}, {res['context']['gpu']}, "
             f"{res['context']['date']}, time limit {res['time_limit']} s", "",
             "| graph | edges | bicliques | variant | kernel s | bicliques/s | GMBE s | "
             "x GMBE | cuMBE (orig.) s | x orig. | counts |", "|---" * 11 + "|"]
    for name, gr in res["graphs"].items():
        pub = []
        for code in PUBLISHED:
            r = gr.get(code, {})
            pub.append(r.get("seconds") if r.get("status") == "ok" else r.get("status"))
        for v, r in gr["runs"].items():
            if r["status"] != "ok":
                # a time-out's count and rate so far, marked as a lower bound
                found = f">= {r['found']}" if "found" in r else ""
                rate = f"{r['rate']:.3g} (at the limit)" if "rate" in r else ""
                lines.append(f"| {name} | {gr['edges']} | {found} | {v} | {r['status']} | "
                             f"{rate} | | | | | |")
                continue
            cells = []
            for s in pub:
                cells += ([f"{s:.4g}", f"{r['kernel_s'] / s:.3f}"] if isinstance(s, float)
                          else [s or "", ""])
            lines.append(
                f"| {name} | {gr['edges']} | {r['count']} | {v} | {r['kernel_s']:.4g} | "
                f"{r['count'] / max(r['kernel_s'], 1e-9):.3g} | {' | '.join(cells)} | "
                f"{'agree' if gr['agree'] else 'DIFFER'} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--archives", default=str(REPO / "konect-mirror"),
                    help="folder with the KONECT archives (download.tsv.<name>.tar.bz2)")
    ap.add_argument("--work", default="/tmp/mbe-scale", help="graphs are made here once")
    ap.add_argument("--out", default="scale-out")
    ap.add_argument("--graphs", default=",".join(DEFAULT_GRAPHS))
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--blocks-per-sm", default="0",
                    help="comma list of launch bounds each variant runs at (cumbe run "
                         "--blocks-per-sm; 0: the default, 768 threads an SM)")
    ap.add_argument("--gmbe", default="", help="GMBE's binary (src/MBE_GPU); empty: skip")
    ap.add_argument("--cumbe-orig", default="",
                    help="the original cuMBE's binary (bin_mbe); empty: skip")
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per run")
    ap.add_argument("--instrument", action="store_true",
                    help="also run each variant's instrumented build (per-phase clocks)")
    ap.add_argument("--no-rounds", action="store_true",
                    help="leave out cuMBE with the maximality check in rounds (--rounds), "
                         "which runs after cuMBE by default")
    a = ap.parse_args(argv)
    try:
        bounds = [int(b) for b in a.blocks_per_sm.split(",")]
    except ValueError:
        ap.error(f"--blocks-per-sm must be a comma list of integers, not {a.blocks_per_sm!r}")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res = {"context": context(), "time_limit": a.time_limit, "graphs": {},
           "warm_up": warm_up(Path(a.work), a.variants.split(","), bounds, a.instrument,
                              not a.no_rounds)}
    for name in a.graphs.split(","):
        t = time.time()
        csr = make(name, Path(a.archives), Path(a.work))
        g = read_csr(csr)
        gr = {"edges": int(g.n_edges), "make_s": round(time.time() - t, 1), "runs": {}}
        res["graphs"][name] = gr
        for label, v, extra, b in builds(a.variants.split(","), bounds, a.instrument,
                                         not a.no_rounds):
            gr["runs"][label] = run_cumbe(csr, v, a.time_limit, extra, b)
            print(name, label, json.dumps(gr["runs"][label])[:300], flush=True)
        counts = {r["count"] for r in gr["runs"].values() if r["status"] == "ok"}
        fps = {r["fingerprint"] for r in gr["runs"].values() if r["status"] == "ok"}
        for code, binary in zip(PUBLISHED, (a.gmbe, a.cumbe_orig)):
            if binary:
                gr[code] = run_published(code, binary, g, a.time_limit)
                print(name, code, json.dumps(gr[code])[:300], flush=True)
                # both count in 32 bits
                if gr[code].get("status") == "ok" and counts and max(counts) < 2**31:
                    counts.add(gr[code]["count"])
        gr["agree"] = len(counts) <= 1 and len(fps) <= 1
        (out / "scale.json").write_text(json.dumps(res, indent=1))
    md = table(res)
    (out / "scale.md").write_text(md)
    print(md)
    return 0 if all(g["agree"] for g in res["graphs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
