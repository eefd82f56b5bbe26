# The published codes (mbebench.published, docs/published.md): each repository's archive is
# fetched and verified once, each code built once per machine and commit. Both steps record
# their outcome in a receipt (ok, skipped or failed with its reason) instead of failing, so
# that the code's runs write skipped or error rows and the other engines go on.


rule published_download:
    output:
        receipt=paths.PUBLISHED_RECEIPT,
    wildcard_constraints:
        slug=alternation(published.slugs()),
    params:
        # where from is not recorded: another mirror, or none, refetches nothing
        github_url=Untracked(config["published"]["github_url"]),
        retry=lambda wc: published.download_retry(wc.slug),
        connect_timeout=Untracked(config["download"]["connect_timeout_s"]),
        read_timeout=Untracked(config["download"]["read_timeout_s"]),
        deadline=Untracked(config["download"]["deadline_s"]),
        retries=Untracked(config["download"]["retries"]),
    log:
        paths.PUBLISHED_DOWNLOAD_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench.published download --slug {wildcards.slug}"
        " --github-url {params.github_url:q} --connect-timeout {params.connect_timeout}"
        " --read-timeout {params.read_timeout} --deadline {params.deadline}"
        " --retries {params.retries} --retry {params.retry} 2> {log:q}"


rule published_build:
    input:
        lambda wc: (ancient if published.built(wc.code) else str)(
            published.download_receipt(wc.code)
        ),
    output:
        receipt=paths.BUILD_RECEIPT,
    wildcard_constraints:
        code=alternation(published.names()),
        commit="[0-9a-f]{12}",
    params:
        retry=lambda wc: published.build_retry(wc.code, wc.commit),
    threads: 4
    resources:
        # a build is CPU work: it must not share the machine with a timed run
        timed_run=1,
    log:
        paths.PUBLISHED_BUILD_LOG,
    conda:
        "../envs/mbe.yaml"
    shell:
        "python -m mbebench.published build --code {wildcards.code} --jobs {threads}"
        " --retry {params.retry} 2> {log:q}"
