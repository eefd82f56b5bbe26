rule download:
    output:
        archive="resources/downloads/{dataset}.tar.bz2",
        checksum="resources/downloads/{dataset}.tar.bz2.sha256",
    params:
        url=lambda wc: source(wc).location,
        sha256=lambda wc: source(wc).sha256 or "",
        connect_timeout=config["download"]["connect_timeout_s"],
        read_timeout=config["download"]["read_timeout_s"],
        deadline=config["download"]["deadline_s"],
        retries=config["download"]["retries"],
        max_member_gib=config["konect"]["max_member_gib"],
    log:
        "logs/download/{dataset}.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench download --dataset {wildcards.dataset:q} --url {params.url:q}"
        " --sha256 '{params.sha256}' --out {output.archive:q}"
        " --connect-timeout {params.connect_timeout} --read-timeout {params.read_timeout}"
        " --deadline {params.deadline} --retries {params.retries}"
        " --max-member-gib {params.max_member_gib} 2> {log:q}"


rule convert:
    input:
        convert_input,
    output:
        csr="results/csr/{dataset}.csr",
        meta="results/csr/{dataset}.json",
    params:
        flag=convert_flag,
        # the archive's checksum was checked by the download; a path's is checked here
        sha256=lambda wc: (source(wc).sha256 or "") if source(wc).kind == "path" else "",
        non_bipartite=lambda wc: (
            "--allow-non-bipartite"
            if config["datasets"][wc.dataset].get("allow_non_bipartite")
            else ""
        ),
        max_member_gib=config["konect"]["max_member_gib"],
    log:
        "logs/convert/{dataset}.log",
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench convert --dataset {wildcards.dataset:q} {params.flag} {input:q}"
        " --sha256 '{params.sha256}' --max-member-gib {params.max_member_gib}"
        " {params.non_bipartite} --out-csr {output.csr:q} --out-meta {output.meta:q} 2> {log:q}"
