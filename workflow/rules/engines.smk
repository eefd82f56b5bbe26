rule run_engine:
    input:
        unpack(run_input),
    output:
        "results/runs/{dataset}/{run_id}.json",
    params:
        args=run_args,
    threads: lambda wc: run_spec(wc).threads
    resources:
        gpu=lambda wc: run_spec(wc).gpu,
        runtime=run_runtime_min,
        mem_mb=run_mem_mb,
    log:
        "logs/runs/{dataset}/{run_id}.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench run --dataset {wildcards.dataset:q} --run-id {wildcards.run_id}"
        " --graph {input.csr:q} --out {output:q} {params.args} 2> {log:q}"


rule export_graph:
    input:
        "results/csr/{dataset}.csr",
    output:
        "results/graphs/{dataset}.{fmt}",
    log:
        "logs/export/{dataset}.{fmt}.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench export --graph {input:q} --format {wildcards.fmt}"
        " --out {output:q} 2> {log:q}"
