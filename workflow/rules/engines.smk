rule run_engine:
    input:
        unpack(run_input),
    output:
        paths.ROW,
    wildcard_constraints:
        dataset=alternation(UNSHARDED),
    params:
        args=run_args,
        csr=lambda wc: plan.graph_file(wc.dataset),
        meta=lambda wc: paths.meta(wc.dataset),
    threads: lambda wc: run_spec(wc).threads
    resources:
        gpu=lambda wc: run_spec(wc).gpu,
        runtime=run_runtime_min,
        mem_mb=run_mem_mb,
        timed_run=run_slot,
    log:
        paths.RUN_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench run --dataset {wildcards.dataset:q} --run-id {wildcards.run_id}"
        " --graph {params.csr:q} --meta {params.meta:q} --out {output:q} {params.args}"
        " 2> {log:q}"


# Some shards of one run of a sharded dataset (datasets.<d>.shards), in one process: a row
# each beside the receipt, which is written last.  The rows are not outputs, so that a job
# that fails or is killed keeps its finished shards and, run again, redoes only the others.
rule run_shards:
    input:
        unpack(run_input),
    output:
        paths.JOB_RECEIPT,
    params:
        args=run_args,
        csr=lambda wc: plan.graph_file(wc.dataset),
        meta=lambda wc: paths.meta(wc.dataset),
        shards=job_shards,
        n=lambda wc: sharding(wc).n,
        # a shard row that went missing runs the job again
        retry=shard_retry,
    threads: lambda wc: run_spec(wc).threads
    resources:
        gpu=lambda wc: run_spec(wc).gpu,
        runtime=shards_runtime_min,
        mem_mb=run_mem_mb,
        timed_run=run_slot,
    log:
        paths.JOB_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench run --dataset {wildcards.dataset:q} --run-id {wildcards.run_id}"
        " --graph {params.csr:q} --meta {params.meta:q} --out {output:q}"
        " --shards {params.shards} --of {params.n} --retry {params.retry} {params.args}"
        " 2> {log:q}"


# The run's row from its shards' rows: counts and fingerprints summed, the slowest shard's
# time; an error naming the shard when one failed (mbebench/gather.py).  It reads a few
# small files: no cluster job of its own.
rule gather_shards:
    input:
        shard_receipts,
    output:
        paths.ROW,
    wildcard_constraints:
        dataset=alternation(SHARDED),
    params:
        folder=lambda wc: plan.shard_folder(wc.dataset, wc.run_id),
        n=lambda wc: sharding(wc).n,
        per_job=lambda wc: sharding(wc).per_job,
    localrule: True
    log:
        paths.GATHER_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench gather --dataset {wildcards.dataset:q} --run-id {wildcards.run_id}"
        " --shard-dir {params.folder:q} --of {params.n} --per-job {params.per_job}"
        " --out {output:q} 2> {log:q}"


rule export_graph:
    input:
        paths.META,
    output:
        paths.EXPORT,
    params:
        csr=lambda wc: plan.graph_file(wc.dataset),
    resources:
        # writing a text graph is CPU work: it must not share the machine with a timed run
        timed_run=1,
    log:
        paths.EXPORT_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench export --graph {params.csr:q} --format {wildcards.fmt}"
        " --out {output:q} 2> {log:q}"
