# mbe-bench: reproduce the cuMBE paper's evaluation.
#   snakemake --cores all                                  # config/config.yaml
#   snakemake --cores all --directory .test                # tiny shipped graphs
#                                                          (.test/config/config.yaml)
# Rules live in workflow/rules/; all logic is in the mbebench package.

from mbebench import configcheck

# A YAML syntax error in the config file: one line naming the file and the line (Snakemake's
# own message names neither).  Files given with --configfile are read by Snakemake before
# this line: docs/reliability.md.
configcheck.check_config_file("config/config.yaml")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/engines.smk"
include: "workflow/rules/published.smk"
include: "workflow/rules/aggregate.smk"


# When Ctrl-C reaches Snakemake: the rows written after it are of jobs it never records
if workflow.is_main_process:
    resume.note_interrupt()


# What `python -m mbebench status` reads to know the planned runs (not in a dry run).
onstart:
    status.write_plan_or_exit(status.PLAN, DATASETS, RUNS, SHARDS)


# The run's last lines: result rows per engine and status, each failure with its reason,
# and the exit status (non-zero on the config's fail_on outcomes; mbebench/closing.py).
onsuccess:
    # rows kept from the last run, if stopped, were this run's to take (mbebench/resume.py)
    resume.clear()
    closing.handler(
        ROWS,
        METAS,
        config,
        started_at=STARTED,
        failed=False,
        log=log,
        dropped=DROPPED,
    )


onerror:
    # rows that finished after Ctrl-C: Snakemake does not record them, and --rerun-incomplete
    # would run them again; the next run takes them (mbebench/resume.py)
    resume.clear(before=STARTED)
    resume.keep(ROWS, resume.interrupted_at())
    closing.handler(
        ROWS,
        METAS,
        config,
        started_at=STARTED,
        failed=True,
        log=log,
        dropped=DROPPED,
    )


# ... and after "Nothing to be done", where Snakemake calls neither handler
if workflow.is_main_process and not REPORTING:
    closing.on_idle_run(
        ROWS, METAS, config, dryrun=lambda: workflow.dryrun, dropped=DROPPED
    )


rule all:
    default_target: True
    input:
        TABLES,
        PLOTS,
        FINAL,
