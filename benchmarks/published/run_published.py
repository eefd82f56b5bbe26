"""Build the published codes from their pinned archives and run them on a few graphs, without
Snakemake: the functions the pipeline's rules call (mbebench.published.fetch/build, the
runner), for a GPU machine that has Python and the toolkit but not the pipeline's tools.

    python benchmarks/published/run_published.py --github-url <mirror> --konect <dir> --out <dir>

<mirror>: a folder holding <owner>/<repo>/archive/<commit>.tar.gz (or a URL); <dir> of
--konect: the KONECT archives (download.tsv.<name>.tar.bz2). Writes run.log and builds.json
(and one row per run under rows/) into --out; the graphs are five mirror datasets and the crown
graphs S_16, S_21 (2^n - 2 maximal bicliques) and, with the time left, S_32 for GMBE.
"""

import argparse
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from mbebench import runner
from mbebench.convert import convert
from mbebench.csr import from_edges, write_csr
from mbebench.published import build, fetch
from mbebench.published.codes import CODES

DATA = {"corporate-leadership": "brunson_corporate-leadership", "crime": "moreno_crime",
        "Unicode": "unicodelang", "UCforum": "opsahl-ucforum", "Marvel": "marvel"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--github-url", required=True)
    ap.add_argument("--konect", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", default="resources")
    ap.add_argument("--budget-s", type=float, default=515)
    a = ap.parse_args()
    out, work = Path(a.out), Path(a.work)
    engines, graphs = work / "engines", work / "graphs"
    os.environ["MBEBENCH_ENGINES_DIR"] = str(engines)
    graphs.mkdir(parents=True, exist_ok=True)
    (out / "rows").mkdir(parents=True, exist_ok=True)
    t0 = time.time()

    def log(*words):
        print(f"[{time.time() - t0:6.1f}s]", *words, flush=True)

    for repo in {c.repo.slug: c.repo for c in CODES.values()}.values():
        log("download", fetch.download(repo, engines, github_url=a.github_url)["status"],
            repo.slug)
    with ThreadPoolExecutor(4) as pool:
        builds = dict(pool.map(lambda n: (n, build.build(CODES[n], engines, jobs=4)), CODES))
    for name, r in builds.items():
        log("build", name, r["status"], r.get("reason"), r["seconds"])
    (out / "builds.json").write_text(json.dumps(builds, indent=1))

    for ds, name in DATA.items():
        convert(ds, out_csr=graphs / f"{ds}.csr", out_meta=graphs / f"{ds}.json",
                archive=Path(a.konect) / f"download.tsv.{name}.tar.bz2")
    for n in (16, 21, 32):
        left = np.repeat(np.arange(n), n - 1)
        right = np.array([j for i in range(n) for j in range(n) if j != i])
        write_csr(from_edges(left, right, n, n), graphs / f"crown-{n}.csr")
    log("graphs ready")

    def run(ds, name, params, timeout):
        row = runner.run(params=params, dataset=ds, run_id=name, engine=name,
                         graph=str(graphs / f"{ds}.csr"), repeats=1, timeout_s=timeout,
                         label=CODES[name].title, entry=f"mbebench.published.engine:{name}")
        (out / "rows" / f"{ds}--{name}.json").write_text(json.dumps(row, indent=1))
        log(ds, name, row["status"], row.get("count"), row.get("algo_s_median"),
            row.get("message"))

    for ds in [*DATA, "crown-16", "crown-21"]:
        run(ds, "gmbe", {"devices": 1}, 120)
        run(ds, "cumbe_orig", {}, 120)
    for ds in ("corporate-leadership", "Unicode", "crown-16"):
        run(ds, "adambe", {"threads": 16}, 120)
        run(ds, "oombea", {}, 120)
    left = a.budget_s - (time.time() - t0)
    log("crown-32 with", left, "s left")
    if left > 60:
        run("crown-32", "gmbe", {"devices": 1}, min(left - 15, 300))


if __name__ == "__main__":
    main()
