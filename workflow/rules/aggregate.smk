rule tables:
    input:
        ROWS,
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
        "python -m mbebench tables --rows {input:q} --datasets {params.datasets:q}"
        " --out-dir results/tables 2> {log:q}"


# Apart from the tables rule, so that tables showing a mismatch stay on disk
# (Snakemake deletes the outputs of a failed job).  The log keeps the report.
# Runs after the tables and plots (its input), so that a disagreement fails the
# pipeline only once the evidence is on disk: a failed job stops Snakemake from
# starting others, and the tables would not be built.
rule check_counts:
    input:
        rows=ROWS,
        tables=TABLES,
        plots=PLOTS,
    output:
        CHECK,
    log:
        "logs/check_counts.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench check --rows {input.rows:q} --out {output:q} --report {log:q}"


rule plots:
    input:
        ROWS,
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
        "python -m mbebench plots --rows {input:q} --datasets {params.datasets:q}"
        " --out-dir results/plots 2> {log:q}"
