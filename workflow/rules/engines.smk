rule run_engine:
    input:
        unpack(run_input),
    output:
        "results/runs/{dataset}/{run_id}.json",
    params:
        args=run_args,
        csr=lambda wc: plan.graph_file(wc.dataset),
        meta=lambda wc: f"results/csr/{wc.dataset}.json",
    threads: lambda wc: run_spec(wc).threads
    resources:
        gpu=lambda wc: run_spec(wc).gpu,
        runtime=run_runtime_min,
        mem_mb=run_mem_mb,
        timed_run=run_slot,
    log:
        "logs/runs/{dataset}/{run_id}.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench run --dataset {wildcards.dataset:q} --run-id {wildcards.run_id}"
        " --graph {params.csr:q} --meta {params.meta:q} --out {output:q} {params.args}"
        " 2> {log:q}"


rule export_graph:
    input:
        "results/csr/{dataset}.json",
    output:
        "results/graphs/{dataset}.{fmt}",
    params:
        csr=lambda wc: plan.graph_file(wc.dataset),
    resources:
        # writing a text graph is CPU work: it must not share the machine with a timed run
        timed_run=1,
    log:
        "logs/export/{dataset}.{fmt}.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench export --graph {params.csr:q} --format {wildcards.fmt}"
        " --out {output:q} 2> {log:q}"
