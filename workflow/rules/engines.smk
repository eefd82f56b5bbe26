rule run_engine:
    input:
        "results/csr/{dataset}.csr",
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
        " --graph {input:q} --out {output:q} {params.args} 2> {log:q}"
