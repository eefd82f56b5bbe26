rule tables:
    input:
        rows=ROWS,
        meta=METAS,
    output:
        report_registry.rule_outputs("tables", report),
    params:
        datasets=DATASETS,
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    log:
        paths.step_log("tables"),
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench tables --rows {input.rows:q} --meta {input.meta:q}"
        " --datasets {params.datasets:q} --out-dir {params.out_dir:q} 2> {log:q}"


# Apart from the tables rule, so that tables showing a mismatch or an unavailable
# dataset stay on disk (Snakemake deletes the outputs of a failed job).  It fails
# the run, one line per dataset; the log keeps the whole report.  It waits for
# the tables and plots: without --keep-going nothing starts after a failed job.
rule check_counts:
    input:
        rows=ROWS,
        meta=METAS,
        after=TABLES + PLOTS + [CLOSING],
    output:
        report_registry.rule_outputs("check_counts", report),
    params:
        # which outcomes fail the run (mbebench/closing.py)
        fail_on=config["fail_on"],
    log:
        paths.step_log("check_counts"),
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench check --rows {input.rows:q} --meta {input.meta:q}"
        " --out {output:q} --report {log:q} --fail-on {params.fail_on}"


# The closing summary as a file, for the report; the Snakefile's onsuccess/onerror
# print it (fresh) as the run's last lines.  It never fails: check_counts does.
rule closing:
    input:
        rows=ROWS,
        meta=METAS,
    output:
        report_registry.rule_outputs("closing", report),
    params:
        fail_on=config["fail_on"],
        # the runs the plan left out (process counts above the cores), each with its reason
        dropped=lambda wc: shlex.join(["--dropped", *DROPPED]) if DROPPED else "",
    log:
        paths.step_log("closing"),
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench closing --rows {input.rows:q} --meta {input.meta:q}"
        " --out {output:q} --fail-on {params.fail_on} {params.dropped} 2> {log:q}"


rule plots:
    input:
        rows=ROWS,
        meta=METAS,
    output:
        report_registry.rule_outputs("plots", report),
    params:
        datasets=DATASETS,
        out_dir=lambda wildcards, output: os.path.dirname(output[0]),
    log:
        paths.step_log("plots"),
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench plots --rows {input.rows:q} --meta {input.meta:q}"
        " --datasets {params.datasets:q} --out-dir {params.out_dir:q} 2> {log:q}"
