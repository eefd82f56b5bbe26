rule tables:
    input:
        rows=ROWS,
        meta=METAS,
    output:
        report(
            "results/tables/summary.csv",
            caption="../report/summary.rst",
            category="Tables",
        ),
        "results/tables/summary.md",
        report(
            "results/tables/speedup.csv",
            caption="../report/speedup.rst",
            category="Tables",
        ),
        "results/tables/speedup.md",
        "results/tables/speedup.tex",
    params:
        datasets=DATASETS,
    log:
        "logs/tables.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench tables --rows {input.rows:q} --meta {input.meta:q}"
        " --datasets {params.datasets:q} --out-dir results/tables 2> {log:q}"


# Apart from the tables rule, so that tables showing a mismatch or an unavailable
# dataset stay on disk (Snakemake deletes the outputs of a failed job).  It fails
# the run, one line per dataset; the log keeps the whole report.  It waits for
# the tables and plots: without --keep-going nothing starts after a failed job.
rule check_counts:
    input:
        rows=ROWS,
        meta=METAS,
        after=TABLES + PLOTS,
    output:
        CHECK,
    log:
        "logs/check_counts.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench check --rows {input.rows:q} --meta {input.meta:q}"
        " --out {output:q} --report {log:q}"


rule plots:
    input:
        rows=ROWS,
        meta=METAS,
    output:
        report(
            "results/plots/workload.png",
            caption="../report/workload.rst",
            category="Plots",
        ),
        "results/plots/workload.pdf",
        report(
            "results/plots/breakdown.png",
            caption="../report/breakdown.rst",
            category="Plots",
        ),
        "results/plots/breakdown.pdf",
        report(
            "results/plots/scaling.png",
            caption="../report/scaling.rst",
            category="Plots",
        ),
        "results/plots/scaling.pdf",
    params:
        datasets=DATASETS,
    log:
        "logs/plots.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench plots --rows {input.rows:q} --meta {input.meta:q}"
        " --datasets {params.datasets:q} --out-dir results/plots 2> {log:q}"
