"""Every file the pipeline writes, once: its path template and a function filling it in.

The templates are Snakemake's (``{dataset}``, ``{run_id}`` ... are wildcards): the rules
(``workflow/rules/*.smk``) name their outputs and logs with them, and ``plan``, ``gather``,
``status``, ``closing`` and ``resume`` call the functions below for the same files.  All
paths are relative to the pipeline's working directory.  The report's tables and figures are
listed in :mod:`mbebench.report.registry`.
"""

from __future__ import annotations

# ------------------------------------------------------------------ datasets
RECEIPT = "resources/downloads/{dataset}.json"  # the download's status file
ARCHIVE = "resources/downloads/{dataset}.tar.bz2"
META = "results/csr/{dataset}.json"  # the convert step's status file (sizes, or why not)
CSR = "results/csr/{dataset}.csr"
EXPORT = "results/graphs/{dataset}.{fmt}"  # a command-line engine's text graph

# ------------------------------------------------------------------ runs
RUNS = "results/runs"
ROW = RUNS + "/{dataset}/{run_id}.json"
RUN_FOLDER = RUNS + "/{dataset}/{run_id}"  # a sharded run's shard rows and receipts
SHARD_ROW_NAME = "shard-{shard}-of-{shards}.json"
JOB_RECEIPT_NAME = "job-{job}-of-{jobs}.json"
JOB_RECEIPT = f"{RUN_FOLDER}/{JOB_RECEIPT_NAME}"
PLAN = "results/plan.json"  # the planned runs, for `python -m mbebench status`
STOPPED = "results/stopped"  # rows that finished while Snakemake was stopping

# ------------------------------------------------------------------ published codes
ENGINES = "resources/engines"  # where they are built (MBEBENCH_ENGINES_DIR for a run)
PUBLISHED_RECEIPT = ENGINES + "/archives/{slug}.json"  # a repository archive's download
BUILD_RECEIPT = ENGINES + "/{code}-{commit}/build.json"

# ------------------------------------------------------------------ logs
RUN_LOGS = "logs/runs"
RUN_LOG = RUN_LOGS + "/{dataset}/{run_id}.log"
JOB_LOG = RUN_LOGS + "/{dataset}/{run_id}/job-{job}-of-{jobs}.log"
GATHER_LOG = RUN_LOGS + "/{dataset}/{run_id}/gather.log"
DOWNLOAD_LOG = "logs/download/{dataset}.log"
CONVERT_LOG = "logs/convert/{dataset}.log"
EXPORT_LOG = "logs/export/{dataset}.{fmt}.log"
STEP_LOG = "logs/{step}.log"  # tables, plots, check_counts, closing
PUBLISHED_DOWNLOAD_LOG = "logs/published/download-{slug}.log"
PUBLISHED_BUILD_LOG = "logs/published/build-{code}-{commit}.log"


def receipt(dataset: str) -> str:
    return RECEIPT.format(dataset=dataset)


def archive(dataset: str) -> str:
    return ARCHIVE.format(dataset=dataset)


def meta(dataset: str) -> str:
    return META.format(dataset=dataset)


def graph_file(dataset: str, fmt: str = "csr") -> str:
    """The graph file an engine reads: the CSR, or a text export (``konect``, ``adj``)."""
    return CSR.format(dataset=dataset) if fmt == "csr" else EXPORT.format(dataset=dataset,
                                                                          fmt=fmt)


def row(dataset: str, run_id: str) -> str:
    return ROW.format(dataset=dataset, run_id=run_id)


def run_folder(dataset: str, run_id: str) -> str:
    return RUN_FOLDER.format(dataset=dataset, run_id=run_id)


def shard_row_name(shard: int, shards: int) -> str:
    return SHARD_ROW_NAME.format(shard=shard, shards=shards)


def job_receipt_name(job: int, jobs: int) -> str:
    return JOB_RECEIPT_NAME.format(job=job, jobs=jobs)


def shard_row(dataset: str, run_id: str, shard: int, shards: int) -> str:
    return f"{run_folder(dataset, run_id)}/{shard_row_name(shard, shards)}"


def job_receipt(dataset: str, run_id: str, job: int, jobs: int) -> str:
    return JOB_RECEIPT.format(dataset=dataset, run_id=run_id, job=job, jobs=jobs)


def run_log(dataset: str, run_id: str) -> str:
    return RUN_LOG.format(dataset=dataset, run_id=run_id)


def job_log(dataset: str, run_id: str, job: int, jobs: int) -> str:
    return JOB_LOG.format(dataset=dataset, run_id=run_id, job=job, jobs=jobs)


def published_receipt(slug: str) -> str:
    return PUBLISHED_RECEIPT.format(slug=slug)


def build_receipt(code: str, commit: str) -> str:
    return BUILD_RECEIPT.format(code=code, commit=commit)


def step_log(step: str) -> str:
    return STEP_LOG.format(step=step)
