# A failure about the dataset (download or convert) is recorded in the step's
# status file instead of failing the job, so the other datasets still reach the
# tables; the retry param reruns the step next time (mbebench/dataset_status.py).
rule download:
    output:
        receipt=paths.RECEIPT,
    params:
        # What is fetched (the archive's file name) and its checksum are recorded: a change
        # re-downloads.  Where from, timeouts and limits are not (Untracked): another
        # mirror, or none, must not redo finished datasets.
        name=lambda wc: source(wc).name,
        url=lambda wc: Untracked(source(wc).location),
        archive=lambda wc: archive(wc.dataset),
        retry=download_retry,
        sha256=lambda wc: source(wc).sha256 or "",
        connect_timeout=Untracked(config["download"]["connect_timeout_s"]),
        read_timeout=Untracked(config["download"]["read_timeout_s"]),
        deadline=Untracked(config["download"]["deadline_s"]),
        retries=Untracked(config["download"]["retries"]),
        max_member_gib=Untracked(config["konect"]["max_member_gib"]),
    log:
        paths.DOWNLOAD_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench download --dataset {wildcards.dataset:q} --url {params.url:q}"
        " --sha256 '{params.sha256}' --out {params.archive:q}"
        " --receipt {output.receipt:q} --record-unavailable --retry {params.retry}"
        " --connect-timeout {params.connect_timeout} --read-timeout {params.read_timeout}"
        " --deadline {params.deadline} --retries {params.retries}"
        " --max-member-gib {params.max_member_gib} 2> {log:q}"


# A checkpoint: whether the dataset is available decides what its runs need
# (common.smk: run_input).  The CSR beside the meta is written only when it is.
checkpoint convert:
    input:
        convert_input,
    output:
        meta=paths.META,
    params:
        source=convert_source,
        csr=lambda wc: plan.graph_file(wc.dataset),
        retry=convert_retry,
        # the archive's checksum was checked by the download; a path's is checked here
        sha256=lambda wc: (source(wc).sha256 or "") if source(wc).kind == "path" else "",
        non_bipartite=lambda wc: (
            "--allow-non-bipartite"
            if config["datasets"][wc.dataset].get("allow_non_bipartite")
            else ""
        ),
        max_member_gib=config["konect"]["max_member_gib"],
    resources:
        # a conversion is CPU work: it must not share the machine with a timed run
        timed_run=1,
    log:
        paths.CONVERT_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench convert --dataset {wildcards.dataset:q} {params.source}"
        " --sha256 '{params.sha256}' --max-member-gib {params.max_member_gib}"
        " {params.non_bipartite} --out-csr {params.csr:q} --out-meta {output.meta:q}"
        " --record-unavailable --retry {params.retry} 2> {log:q}"
