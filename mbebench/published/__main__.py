"""``python -m mbebench.published download|build|list``: the steps the pipeline's rules call.

Both steps record their outcome in a receipt (``status`` ok / skipped / failed and a one-line
``reason``) and exit 0, so that one code that cannot be had or built leaves the others and the
tables alone; the reason is printed on stderr, and its runs' rows carry it.
"""

from __future__ import annotations

import argparse
import sys

from mbebench.published import build, fetch
from mbebench.published.codes import CODES, GITHUB


def repos() -> dict:
    return {c.repo.slug: c.repo for c in CODES.values()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mbebench.published")
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("download", help="fetch and verify one repository's archive")
    d.add_argument("--slug", required=True, choices=sorted(repos()),
                   help="<owner>+<repo>-<commit> (mbebench.published.codes)")
    d.add_argument("--root", default="resources/engines")
    d.add_argument("--github-url", default=GITHUB,
                   help="replaces https://github.com/: a mirror URL or folder")
    d.add_argument("--connect-timeout", type=float, default=10)
    d.add_argument("--read-timeout", type=float, default=120)
    d.add_argument("--deadline", type=float, default=7200)
    d.add_argument("--retries", type=int, default=3)
    d.add_argument("--retry", default="0", help="the rule's retry token, kept in the receipt")
    b = sub.add_parser("build", help="patch and build one code from its archive")
    b.add_argument("--code", required=True, choices=sorted(CODES))
    b.add_argument("--root", default="resources/engines")
    b.add_argument("--jobs", type=int, default=1)
    b.add_argument("--retry", default="0", help="the rule's retry token, kept in the receipt")
    sub.add_parser("list", help="the codes, their repositories and pinned commits")
    a = ap.parse_args(argv)
    if a.cmd == "list":
        for c in CODES.values():
            print(f"{c.name}\t{c.repo.owner}/{c.repo.name}@{c.repo.commit}\tneeds "
                  f"{', '.join(c.needs)}\tcounts in {c.count_bits} bits")
        return 0
    if a.cmd == "download":
        repo = repos()[a.slug]
        r = fetch.download(repo, a.root, github_url=a.github_url,
                           connect_timeout=a.connect_timeout, read_timeout=a.read_timeout,
                           deadline_s=a.deadline, retries=a.retries, retry=a.retry)
        what = f"{repo.owner}/{repo.name}@{repo.commit[:12]}"
    else:
        r = build.build(CODES[a.code], a.root, jobs=a.jobs, retry=a.retry)
        what = a.code
    line = f"{what}: {r['status']}" + (f": {r['reason']}" if r.get("reason") else "")
    print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
