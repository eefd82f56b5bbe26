# mbe-bench: reproduce the cuMBE paper's evaluation.
#   snakemake --cores all                                  # config/config.yaml
#   snakemake --cores all --directory .test                # tiny shipped graphs
#                                                          (.test/config/config.yaml)
# Rules live in workflow/rules/; all logic is in the mbebench package.


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/ingest.smk"
include: "workflow/rules/engines.smk"
include: "workflow/rules/aggregate.smk"


# Snakemake's own last lines say only that a job failed: name the datasets.
onerror:
    print(ingest.failure_summary(METAS, ROWS), file=sys.stderr)


rule all:
    default_target: True
    input:
        TABLES,
        PLOTS,
        CHECK,
