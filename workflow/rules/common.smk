import json
import math
import re
import shlex

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from mbebench import plan


validate(config, "../schemas/config.schema.yaml")

DATASETS = plan.selected_datasets(config)


def _cores():
    # --report and --lint give no core count, and asking raises; use the machine's
    try:
        return workflow.cores or None
    except WorkflowError:
        return None


RUNS = plan.plan_runs(config, _cores())
RUN_IDS = list(RUNS)

TABLES = expand(
    "results/tables/{name}",
    name=["summary.csv", "summary.md", "speedup.csv", "speedup.md", "speedup.tex"],
)
PLOTS = expand(
    "results/plots/{name}.{ext}",
    name=["workload", "breakdown", "scaling"],
    ext=["png", "pdf"],
)
ROWS = plan.planned_rows(DATASETS, RUNS)
CHECK = "results/tables/agreement.txt"


wildcard_constraints:
    dataset="|".join(map(re.escape, DATASETS)) or "(?!)",
    run_id="|".join(map(re.escape, RUN_IDS)),
    fmt="konect|adj",


def source(wildcards):
    return plan.dataset_source(config, wildcards.dataset)


def convert_input(wildcards):
    src = source(wildcards)
    if src.kind == "path":
        return src.location
    return f"resources/downloads/{wildcards.dataset}.tar.bz2"


def convert_flag(wildcards):
    return "--edges" if source(wildcards).kind == "path" else "--archive"


def run_spec(wildcards):
    return RUNS[wildcards.run_id]


def run_input(wildcards):
    """The CSR, and the text export a command-line engine reads instead."""
    spec = run_spec(wildcards)
    files = {"csr": plan.graph_file(wildcards.dataset)}
    if spec.input != "csr":
        files["export"] = plan.graph_file(wildcards.dataset, spec.input)
    return files


def run_args(wildcards):
    spec = run_spec(wildcards)
    args = ["--job", json.dumps(spec.job(), sort_keys=True)]
    if spec.input != "csr":
        args += ["--input-file", plan.graph_file(wildcards.dataset, spec.input)]
    return shlex.join(args)


# Cluster requests for one engine run (used by executors such as SLURM; a local
# run is limited by them only when --resources mem_mb=... is given).
def run_runtime_min(wildcards):
    """Minutes: the run's own timeout plus start-up, so the runner, not the
    scheduler, kills a slow run and records it as a 'timeout' row."""
    return math.ceil(run_spec(wildcards).timeout_s / 60) + 15


def run_mem_mb(wildcards, input, threads):
    """MB: interpreter and JIT per process plus a few copies of the CSR graph."""
    return int(1500 + 500 * threads + 8 * input.size_mb)
