import json
import math
import os
import re
import shlex
import sys
import time

from snakemake.exceptions import WorkflowError

from mbebench import closing, configcheck, dataset_status, paths, plan, resume, status
from mbebench.dataset_status import Untracked
from mbebench.published import pipeline as published
from mbebench.report import registry as report_registry


def _cluster_cores():
    """The profile's cores (one compute node's) under a cluster executor, where the jobs run on
    machines this one cannot see, and in each cluster job (given the same --cores); None for a
    local run, whose plan is this machine's whatever --cores says (docs/plan.md).  A cluster
    run is told by --jobs, which a local run folds into --cores (a local dry run with -j
    keeps it, but with 1 core)."""
    try:
        cores = workflow.cores
    except WorkflowError:  # --report, --lint, a cluster without cores: no core count
        return None
    if workflow.remote_exec or (workflow.nodes is not None and cores > 1):
        return cores
    return None


# A config error is one line per problem, naming the key and the expected form, and
# nothing runs (configcheck.fail: no schema dump, no traceback).
try:
    configcheck.validate(
        config,
        os.path.join(workflow.basedir, "workflow", "schemas", "config.schema.yaml"),
    )
    DATASETS = plan.selected_datasets(config)
    plan.prefer_overrides(config, configcheck.load_config("config/config.yaml"))
    PLAN_CORES = plan.machine_cores(_cluster_cores())
    RUNS = plan.plan_runs(config, PLAN_CORES)
    # what the plan left out, and why: the closing summary lists it
    DROPPED = plan.dropped_runs(
        config,
        PLAN_CORES,
        "the profile's (one compute node's)" if _cluster_cores() else "this machine's",
    )
    SHARDS = plan.dataset_shards(config, DATASETS)
    plan.check_shards(SHARDS, RUNS)
except plan.ConfigError as e:
    configcheck.fail(e)
RUN_IDS = list(RUNS)
# `snakemake --report` builds its DAG from the config it is given, and a run's --config or
# --configfile is easily left out: it reports what is on disk, so that files that run never
# made do not each get a "Missing metadata" warning.
REPORTING = plan.reporting(sys.argv)
if REPORTING:
    DATASETS = [d for d in DATASETS if os.path.exists(paths.meta(d))]

# the report's files, from its registry (mbebench/report/registry.py)
TABLES = report_registry.rule_files("tables")
PLOTS = report_registry.rule_files("plots")
ROWS = plan.planned_rows(DATASETS, RUNS)
# The convert step's status of every dataset (sizes, or why it is unavailable)
METAS = expand(paths.META, dataset=DATASETS)
(CHECK,) = report_registry.rule_files("check_counts")
(CLOSING,) = report_registry.rule_files("closing")
FINAL = [CLOSING, CHECK]
if REPORTING:
    ROWS = plan.on_disk(ROWS)
    FINAL = plan.on_disk(FINAL)
# This invocation's start: a run whose log is older did not start in it (mbebench/closing.py)
STARTED = time.time()


def alternation(names):
    """A wildcard constraint matching exactly these names (none: nothing)."""
    return "|".join(map(re.escape, names)) or "(?!)"


# A run of a sharded dataset is gathered from its shards by gather_shards, any other is
# one run_engine job; the two share the row's path and are told apart by the dataset.
SHARDED = [d for d in DATASETS if SHARDS[d].sharded]
UNSHARDED = [d for d in DATASETS if not SHARDS[d].sharded]


wildcard_constraints:
    dataset=alternation(DATASETS),
    run_id=alternation(RUN_IDS),
    fmt="konect|adj",
    job=r"\d+",
    jobs=r"\d+",


def source(wildcards):
    return plan.dataset_source(config, wildcards.dataset)


def receipt(dataset):
    return paths.receipt(dataset)


def archive(dataset):
    return paths.archive(dataset)


def convert_input(wildcards):
    """The download's receipt, or a path dataset's edge list when it is there: a missing
    file (or a symlink loop) is the convert step's one-line error, recorded as the
    dataset being unavailable, not a MissingInputException that stops every dataset."""
    src = source(wildcards)
    if src.kind == "path":
        return [src.location] if os.path.isfile(src.location) else []
    ds = wildcards.dataset
    meta = paths.meta(ds)
    if dataset_status.converted(
        receipt(ds), meta, plan.graph_file(ds), src.sha256, src.name
    ):
        # ancient: a download that re-runs (forced, a new version of its rule, or a failed
        # refresh that keeps the archive) does not by its time redo a finished conversion
        # and every engine run after it.  Only a finished one: Snakemake evaluates no trigger
        # of a job downstream of one that re-runs, so an unfinished conversion, or one of
        # another archive than the receipt's, must follow its download.
        return ancient(receipt(ds))
    return receipt(ds)


def convert_source(wildcards):
    src = source(wildcards)
    if src.kind == "path":
        return shlex.join(["--edges", src.location])
    ds = wildcards.dataset
    return shlex.join(["--archive", archive(ds), "--receipt", receipt(ds)])


def download_retry(wildcards):
    return dataset_status.retry_token(receipt(wildcards.dataset))


def convert_retry(wildcards):
    ds = wildcards.dataset
    return dataset_status.retry_token(paths.meta(ds), need=[plan.graph_file(ds)])


def run_spec(wildcards):
    return RUNS[wildcards.run_id]


def run_input(wildcards):
    """The dataset's convert status; the CSR, and the text export a command-line engine
    reads instead, only when the dataset is available (known once convert has run)."""
    spec = run_spec(wildcards)
    ds = wildcards.dataset
    meta = checkpoints.convert.get(dataset=ds).output.meta
    files = {"meta": meta}
    if dataset_status.unavailable_reason(meta) is None:
        files["csr"] = plan.graph_file(ds)
        if spec.input != "csr":
            files["export"] = plan.graph_file(ds, spec.input)
        # a published code's run waits for its build (workflow/rules/published.smk)
        build = published.build_receipt(spec.engine)
        if build:
            files["build"] = build
    return files


def run_slot(wildcards, input):
    """The timed_run resource: 1 for a run (the default limit of 1, set in
    profiles/default, serialises them), 0 for the row of an unavailable dataset."""
    return 1 if "csr" in input.keys() else 0


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


# Shards (mbebench.gather): a job runs some shards of one run and writes a receipt.
def sharding(wildcards):
    return SHARDS[wildcards.dataset]


def job_shards(wildcards):
    return plan.job_shards(sharding(wildcards), int(wildcards.job), int(wildcards.jobs))


def shard_receipts(wildcards):
    return plan.shard_receipts(wildcards.dataset, wildcards.run_id, sharding(wildcards))


def shard_retry(wildcards):
    """Unchanged while the job's receipt and its shards' rows are there; the next number
    when a row went missing, so that the job runs again (only for those shards)."""
    rows = plan.shard_rows(
        wildcards.dataset, wildcards.run_id, sharding(wildcards), job_shards(wildcards)
    )
    receipt = plan.shard_receipt(
        wildcards.dataset, wildcards.run_id, int(wildcards.job), int(wildcards.jobs)
    )
    return dataset_status.retry_token(receipt, need=rows)


def shards_runtime_min(wildcards):
    """Minutes: each shard of the job may take the run's timeout, plus start-up."""
    spec = run_spec(wildcards)
    return math.ceil(len(job_shards(wildcards)) * spec.timeout_s / 60) + 15
