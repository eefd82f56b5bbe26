"""``mbe-bench <command>`` (or ``python -m mbebench <command>``): the steps the Snakemake
rules call, and the engines' parameters (``mbe-bench engines``).

Each command does one pipeline step.  A failure the pipeline expects (a bad
download, a corrupt file, a config error, engines that disagree) prints one
line naming the dataset or file; anything else also prints its traceback (the
rule's log keeps it).  Both exit non-zero.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import traceback
from pathlib import Path

GIB = 1 << 30


class _Interrupted(BaseException):
    """SIGTERM/SIGHUP/SIGINT as an exception, so that temp files are removed on the way out."""

    def __init__(self, message: str, signum: int):
        super().__init__(message)
        self.signum = signum


def _ingest_args(p: argparse.ArgumentParser, record: str, kept: str) -> None:
    """The options download and convert share: archive member limit, the record of an
    unavailable dataset (in ``record``), the pipeline's retry token (kept in ``kept``)."""
    p.add_argument("--max-member-gib", type=float,
                   help="refuse archives with a member larger than this (default 16)")
    p.add_argument("--record-unavailable", action="store_true",
                   help=f"a failure about the dataset is recorded in {record} as "
                   "'unavailable' and the command succeeds")
    p.add_argument("--retry", help=f"the pipeline's retry token, kept in {kept}")


def _clean_exit_on_signals(dataset: str) -> None:
    # By default SIGTERM (what Snakemake and schedulers send) ends the process
    # on the spot and leaves a half-written temp file behind.
    def handler(signum, frame):
        name = signal.Signals(signum).name
        raise _Interrupted(f"dataset {dataset!r}: interrupted by {name}", signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, handler)


# Errors whose message says everything: named, not imported, so that this list
# does not pull the ingest modules into every command.
EXPECTED_ERRORS = frozenset({
    "DownloadError", "ArchiveError", "KonectParseError", "KonectMemoryError", "CSRError",
    "ConvertError", "ConvertIOError", "ConvertMemoryError", "ConfigError", "CountMismatchError",
    "RunNotFinal", "NotAllDatasetsRan", "RunsFailed", "GatherError",
})


def _cmd_download(a) -> None:
    from mbebench import dataset_status
    from mbebench.download import fetch, kept_archive

    _clean_exit_on_signals(a.dataset)
    with _recording(a, "download", a.receipt if a.record_unavailable else None,
                    dataset_status.DOWNLOAD_ERRORS):
        try:
            info = fetch(
                a.url,
                Path(a.out),
                dataset=a.dataset,
                sha256=a.sha256 or None,
                connect_timeout=a.connect_timeout,
                read_timeout=a.read_timeout,
                retries=a.retries,
                **_given(deadline_s=a.deadline, max_member_bytes=_bytes(a.max_member_gib)),
            )
        except Exception as e:
            kept = kept_archive(Path(a.out), a.sha256 or None) if a.receipt else None
            if kept is None or not dataset_status.is_dataset_error(
                    e, dataset_status.DOWNLOAD_ERRORS):
                raise
            # fetch never replaces a good archive with a failed one: keep using it
            note = (f"{' '.join(str(e).split())}; kept the archive downloaded before "
                    f"({kept['path']}, sha256 {kept['sha256']})")
            print(f"warning: {note}", file=sys.stderr)
            info = {"url": a.url, **kept, "kept": True, "note": note}
        if a.receipt:
            dataset_status.write_receipt(a.receipt, info, dataset=a.dataset, retry=a.retry)


def _cmd_convert(a) -> None:
    from mbebench import dataset_status
    from mbebench.convert import convert

    _clean_exit_on_signals(a.dataset)
    if a.receipt:  # the download's outcome: an unavailable archive makes an unavailable graph
        reason = dataset_status.unavailable_reason(a.receipt)
        if reason is not None:
            print(f"error: {reason}", file=sys.stderr)
            if not a.record_unavailable:
                raise SystemExit(1)
            dataset_status.write_unavailable(a.out_meta, dataset=a.dataset, step="download",
                                             reason=reason, retry=a.retry)
            return
    with _recording(a, "convert", a.out_meta if a.record_unavailable else None,
                    dataset_status.CONVERT_ERRORS):
        convert(
            a.dataset,
            out_csr=Path(a.out_csr),
            out_meta=Path(a.out_meta),
            archive=Path(a.archive) if a.archive else None,
            edges=Path(a.edges) if a.edges else None,
            sha256=a.sha256 or None,
            allow_non_bipartite=a.allow_non_bipartite,
            retry=a.retry,
            archive_sha256=dataset_status.archive_sha256(a.receipt) if a.receipt else None,
            **_given(max_member_bytes=_bytes(a.max_member_gib)),
        )


@contextlib.contextmanager
def _recording(a, step: str, status_file: str | None, errors):
    """With a status file, a failure about the dataset (one of ``errors``) is recorded in
    it as 'unavailable' and the command succeeds (mbebench.dataset_status); the log keeps the
    one-line error.  Without one, or for any other exception, the command fails."""
    from mbebench import dataset_status

    try:
        yield
    except Exception as e:
        if not status_file or not dataset_status.is_dataset_error(e, errors):
            raise
        reason = " ".join(str(e).split()) or type(e).__name__
        print(f"error: {reason}", file=sys.stderr)
        dataset_status.write_unavailable(status_file, dataset=a.dataset, step=step,
                                         reason=reason, retry=a.retry)


def _given(**kw) -> dict:
    """The options given on the command line; the library's defaults hold for the rest."""
    return {k: v for k, v in kw.items() if v is not None}


def _bytes(gib: float | None) -> int | None:
    return None if gib is None else int(gib * GIB)


def _cmd_run(a) -> None:
    from mbebench import atomic, dataset_status, plan, resume, runner
    from mbebench.csr import identity

    if a.job:
        job = json.loads(a.job)
    else:
        job = plan.direct_run(a.engine, json.loads(a.params), a.run_id, repeats=a.repeats,
                              timeout_s=a.timeout, simulate=a.simulate,
                              require_gpu=a.require_gpu).job()
    what = {"dataset": a.dataset, "run_id": a.run_id, "engine": job["engine"],
            "params": job["params"], "label": job["label"], "variant": job["variant"],
            "timed": job["timed"], "repeats": job["repeats"], "timeout_s": job["timeout_s"],
            "simulated": bool(job["env"]), "entry": job["entry"], "command": job["command"]}
    if a.shards is not None:
        _run_shards(a, job, what)
        return
    reason = dataset_status.unavailable_reason(a.meta) if a.meta else None
    if reason is not None:  # nothing to run: the row says why, the tables list it
        row = runner.unavailable_row(reason=reason, **what)
        atomic.write_json(a.out, row)
        print(f"{a.dataset} {a.run_id}: unavailable ({reason})", file=sys.stderr)
        return
    # which graph the row is of: a row kept from a stopped run must be of this one
    csr_id = identity(a.graph)
    kept = resume.take(a.out, {**what, "csr": csr_id})
    if kept is not None:
        print(f"{a.dataset} {a.run_id}: {kept['status']}, finished while the last run was "
              f"stopping; kept ({resume.copy_path(a.out)}), not run again", file=sys.stderr)
        return
    try:
        row = runner.run(graph=a.graph, env=job["env"] or None, input_path=a.input_file, **what)
    except runner.RunNotFinal as e:
        raise runner.moved_aside(e) from None
    row["csr"] = csr_id
    atomic.write_json(a.out, row)
    status = row["status"]
    detail = f"count={row['count']} algo_s={row['algo_s_median']}" if status == "ok" else row["message"]
    print(f"{a.dataset} {a.run_id}: {status} ({detail})", file=sys.stderr)
    if status == "skipped" and job["require_gpu"]:
        Path(a.out).unlink()
        raise SystemExit(
            f"{a.dataset} {a.run_id}: {row['message']}, but engines.{job['engine']}.require_gpu"
            " is true"
        )


def _run_shards(a, job: dict, what: dict) -> None:
    """Shards ``a.shards`` of ``a.of`` of one run, in one process: a row each
    (``<folder of --out>/shard-<i>-of-<n>.json``, written as soon as the shard is done),
    then the receipt ``--out`` (mbebench.gather).  A shard whose row is there already,
    finished for this very run, is not run again: a job killed half way redoes only
    its unfinished shards."""
    from mbebench import atomic, dataset_status, gather, runner
    from mbebench.csr import identity

    n, folder = a.of, Path(a.out).parent
    bad = [i for i in a.shards if not 0 <= i < n]
    if n < 1 or bad:
        raise SystemExit(f"{a.dataset} {a.run_id}: shards {bad} not in 0..{n - 1}")
    reason = dataset_status.unavailable_reason(a.meta) if a.meta else None
    # which graph the rows are of: a shard of another graph is not a finished shard
    csr_id = None if reason is not None else identity(a.graph)
    want = {i: {**what, "params": {**what["params"], "shard": f"{i}/{n}"}, "csr": csr_id}
            for i in a.shards}
    todo = [i for i in a.shards if not gather.finished(gather.shard_row(folder, i, n), want[i])]
    kept = [i for i in a.shards if i not in todo]
    if kept:
        print(f"{a.dataset} {a.run_id}: shard(s) {', '.join(f'{i}/{n}' for i in kept)} "
              "finished before, kept", file=sys.stderr)
    statuses: dict[int, str] = {}

    def write(i: int, row: dict) -> None:
        row["csr"] = csr_id
        atomic.write_json(gather.shard_row(folder, i, n), row)
        statuses[i] = row["status"]
        detail = (f"count={row['count']} algo_s={row['algo_s_median']}"
                  if row["status"] == "ok" else row["message"])
        print(f"{a.dataset} {a.run_id} shard {i}/{n}: {row['status']} ({detail})",
              file=sys.stderr)

    not_final = []
    if reason is not None:  # nothing to run: each shard's row says why
        print(f"{a.dataset} {a.run_id}: unavailable ({reason})", file=sys.stderr)
        for i in todo:
            write(i, runner.unavailable_row(reason=reason, **{**what, "params": want[i]["params"]}))
    elif todo:
        try:
            not_final = runner.run_items(
                graph=a.graph, env=job["env"] or None, input_path=a.input_file,
                items=[want[i]["params"] for i in todo],
                on_row=lambda k, row: write(todo[k], row),
                progress_labels=[f"{a.dataset} {a.run_id} shard {i}/{n}" for i in todo],
                **{k: v for k, v in what.items() if k != "params"})
        except runner.RunNotFinal as e:
            raise runner.moved_aside(e) from None
    skipped = [i for i, st in statuses.items() if st == "skipped"]
    if skipped and job["require_gpu"]:
        for i in skipped:
            gather.shard_row(folder, i, n).unlink()
        raise SystemExit(f"{a.dataset} {a.run_id}: shard(s) {skipped} skipped, but "
                         f"engines.{job['engine']}.require_gpu is true")
    if not_final:
        raise runner.RunNotFinal("; ".join(str(e) for _, e in not_final)
                                 + f" ({len(a.shards) - len(not_final)} of this job's "
                                 f"{len(a.shards)} shards have rows)")
    atomic.write_json(a.out, {"status": "ok", "dataset": a.dataset, "run_id": a.run_id,
                              "shards": a.shards, "of": n, "retry": a.retry,
                              "rows": [gather.shard_row(folder, i, n).name for i in a.shards]})


def _cmd_gather(a) -> None:
    from mbebench import atomic, gather

    rows = gather.load(a.shard_dir, a.of, dataset=a.dataset, run_id=a.run_id)
    row = gather.gather(rows, per_job=a.per_job)
    atomic.write_json(a.out, row)
    detail = (f"count={row['count']} time_s={row['algo_s_median']} (slowest shard; "
              f"sum {row['shards']['time_sum_s']})" if row["status"] == "ok" else row["message"])
    print(f"{a.dataset} {a.run_id}: {a.of} shards: {row['status']} ({detail})", file=sys.stderr)


def _cmd_export(a) -> None:
    from mbebench import export
    from mbebench.csr import read_csr

    export.write(read_csr(a.graph), a.format, a.out)


def _statuses(a) -> tuple[dict, dict]:
    """(sizes, unavailable datasets and why) from the convert step's meta files."""
    from mbebench import dataset_status

    metas = a.meta or []
    return dataset_status.graph_sizes(metas), dataset_status.unavailable_datasets(metas)


def _cmd_tables(a) -> None:
    from mbebench import rows, tables

    sizes, unavailable = _statuses(a)
    tables.write_all(rows.load_rows(a.rows), a.datasets, Path(a.out_dir), meta=sizes,
                     unavailable=unavailable)


def _cmd_check(a) -> None:
    from mbebench import atomic, closing, rows, tables

    loaded = rows.load_rows(a.rows)
    _, unavailable = _statuses(a)
    report = tables.agreement_report(loaded, unavailable)
    if a.report:
        atomic.write_text(a.report, report)
    closing.verdict(loaded, unavailable, _fail_on(a))
    atomic.write_text(a.out, report)


def _fail_on(a) -> tuple[str, ...]:
    from mbebench.closing import FAIL_ON

    return FAIL_ON if a.fail_on is None else tuple(a.fail_on)


def _cmd_closing(a) -> None:
    from mbebench import atomic, closing

    summary = closing.summarize(a.rows, a.meta or [], fail_on=_fail_on(a),
                                dropped=a.dropped or [])
    atomic.write_text(a.out, summary.text)


def _cmd_plots(a) -> None:
    from mbebench import plots, rows

    _, unavailable = _statuses(a)
    plots.write_all(rows.load_rows(a.rows), a.datasets, Path(a.out_dir),
                    unavailable=unavailable)


def _cmd_status(a) -> None:
    from mbebench import status

    if not Path(a.dir).is_dir():  # a typo must not read as "no runs"
        raise SystemExit(f"error: --dir {a.dir}: no such directory (the pipeline's working "
                         "directory, holding results/ and logs/)")
    states, written_at = status.status(a.dir)
    print(status.as_json(states, written_at) if a.json else
          status.format_status(states, written_at), end="" if not a.json else "\n")


def _cmd_engines(a) -> None:
    from mbebench import engine

    specs = [engine.get_spec(name) for name in engine.ENGINES]
    if a.schema:
        print(json.dumps({s.name: s.section_schema() for s in specs}, indent=2))
        return
    for s in specs:
        print(f"{s.name} ({s.label}): {s.doc}")
        print(f"  runs: {s.entry or ' '.join(s.command)}; CPUs: {s.cpus}; GPU: {s.gpu}")
        for p in s.params:
            limits = ", ".join(
                f"{k} {v}" for k, v in p.value_schema().items() if k not in ("type",)
            )
            default = list(p.default) if isinstance(p.default, tuple) else p.default
            print(f"  {p.name} = {json.dumps(default)}"
                  f"{f' ({limits})' if limits else ''}: {p.doc}")
        print()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mbe-bench")
    except PackageNotFoundError:  # run from a checkout that is not installed
        from mbebench import __version__

        return __version__


def closing_outcomes() -> tuple[str, ...]:
    from mbebench.closing import OUTCOMES

    return OUTCOMES


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mbe-bench", description=__doc__.replace("``", ""),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    # a helper per stage keeps each short; --help lists commands in the order they are added
    for add_commands in (_add_ingest_commands, _add_run_commands, _add_report_commands):
        add_commands(sub)
    return p


def _add_ingest_commands(sub) -> None:
    d = sub.add_parser("download", help="fetch one dataset archive")
    d.add_argument("--dataset", required=True)
    d.add_argument("--url", required=True)
    d.add_argument("--out", required=True)
    d.add_argument("--sha256", default="")
    d.add_argument("--connect-timeout", type=float, default=10)
    d.add_argument("--read-timeout", type=float, default=120)
    d.add_argument("--retries", type=int, default=3)
    d.add_argument("--deadline", type=float,
                   help="seconds for the whole download, all attempts included (default 7200)")
    d.add_argument("--receipt", help="write a receipt of the download here (JSON)")
    _ingest_args(d, "--receipt", "the receipt")
    d.set_defaults(func=_cmd_download)
    c = sub.add_parser("convert", help="KONECT archive or edge list -> binary CSR")
    c.add_argument("--dataset", required=True)
    src = c.add_mutually_exclusive_group(required=True)
    src.add_argument("--archive")
    src.add_argument("--edges")
    c.add_argument("--out-csr", required=True)
    c.add_argument("--out-meta", required=True)
    c.add_argument("--sha256", default="",
                   help="expected SHA-256 of the edge list (the --edges file or the out.* member)")
    c.add_argument("--allow-non-bipartite", action="store_true",
                   help="read a '%% sym'/'%% asym' KONECT file's two columns as the two sides")
    c.add_argument("--receipt", help="the download's receipt: if it says unavailable, so is "
                   "the graph (recorded in --out-meta)")
    _ingest_args(c, "--out-meta", "the meta")
    c.set_defaults(func=_cmd_convert)


def _add_run_commands(sub) -> None:
    r = sub.add_parser("run", help="run one engine on one CSR file, write one result row")
    r.add_argument("--dataset", required=True)
    r.add_argument("--run-id", required=True)
    what = r.add_mutually_exclusive_group(required=True)
    what.add_argument("--job", help="the run as JSON (mbebench.plan.RunSpec.job(); the pipeline)")
    what.add_argument("--engine", help="a registered engine or 'module:function' (by hand)")
    r.add_argument("--graph", required=True, help="the dataset's CSR file")
    r.add_argument("--input-file", help="the file a command-line engine reads, if not the CSR")
    r.add_argument("--meta", help="the dataset's convert status (results/csr/<dataset>.json): "
                   "an unavailable dataset gets an 'unavailable' row and nothing runs")
    r.add_argument("--out", required=True)
    r.add_argument("--params", default="{}", help="with --engine: engine parameters as JSON")
    r.add_argument("--repeats", type=int, default=1)
    r.add_argument("--timeout", type=float, default=3600)
    r.add_argument("--simulate", action="store_true", help="the engine's simulator (no GPU)")
    r.add_argument("--require-gpu", action="store_true")
    r.add_argument("--shards", type=int, nargs="+", metavar="I",
                   help="run these shards (i of --of) in one process: a row each beside "
                   "--out, which is then the job's receipt (mbebench.gather)")
    r.add_argument("--of", type=int, default=1, help="with --shards: the run's shard count")
    r.add_argument("--retry", help="with --shards: the pipeline's retry token, kept in the receipt")
    r.set_defaults(func=_cmd_run)
    g = sub.add_parser("gather", help="add the shard rows of one run up into its row")
    g.add_argument("--dataset", required=True)
    g.add_argument("--run-id", required=True)
    g.add_argument("--shard-dir", required=True, help="the run's shard rows' folder")
    g.add_argument("--of", type=int, required=True, help="the run's shard count")
    g.add_argument("--per-job", type=int, default=1, help="shards per job (recorded)")
    g.add_argument("--out", required=True)
    g.set_defaults(func=_cmd_gather)
    x = sub.add_parser("export", help="CSR -> text graph file for command-line engines")
    x.add_argument("--graph", required=True)
    x.add_argument("--format", required=True, choices=["konect", "adj"])
    x.add_argument("--out", required=True)
    x.set_defaults(func=_cmd_export)


def _add_report_commands(sub) -> None:
    for name, func, help_ in (
        ("tables", _cmd_tables, "result rows -> summary and speedup tables"),
        ("plots", _cmd_plots, "result rows -> workload, breakdown and scaling plots"),
    ):
        t = sub.add_parser(name, help=help_)
        t.add_argument("--rows", nargs="+", required=True)
        t.add_argument("--meta", nargs="*", help="the convert step's meta files: sizes, and "
                       "which datasets are unavailable and why")
        t.add_argument("--datasets", nargs="+", required=True)
        t.add_argument("--out-dir", required=True)
        t.set_defaults(func=func)
    k = sub.add_parser("check", help="fail on the outcomes --fail-on lists (by default: ok "
                       "runs of a dataset disagree, a run's error or timeout, an unavailable "
                       "dataset)")
    k.add_argument("--rows", nargs="+", required=True)
    k.add_argument("--meta", nargs="*", help="the convert step's meta files")
    k.add_argument("--out", required=True, help="the report, written only when all agree")
    k.add_argument("--report", help="the report, written in any case (the rule's log)")
    k.add_argument("--fail-on", nargs="*", choices=closing_outcomes(), default=None,
                   help="the outcomes that fail the check (default: error timeout mismatch "
                   "unavailable; the config's fail_on)")
    k.set_defaults(func=_cmd_check)
    s = sub.add_parser("closing", help="the closing summary: result rows per engine and "
                       "status, and each failure with its reason")
    s.add_argument("--rows", nargs="+", required=True)
    s.add_argument("--meta", nargs="*", help="the convert step's meta files")
    s.add_argument("--out", required=True)
    s.add_argument("--fail-on", nargs="*", choices=closing_outcomes(), default=None)
    s.add_argument("--dropped", nargs="*", help="a line each for the runs the plan left out "
                   "(mbebench.plan.dropped_runs)")
    s.set_defaults(func=_cmd_closing)
    st = sub.add_parser("status", help="where the runs of a pipeline stand: finished, running "
                        "(last progress line, shards done), failed, not started")
    st.add_argument("--dir", default=".", help="the pipeline's working directory (the one "
                    "holding results/ and logs/; e.g. .test)")
    st.add_argument("--json", action="store_true", help="as JSON")
    st.set_defaults(func=_cmd_status)
    e = sub.add_parser("engines", help="registered engines and their parameters")
    e.add_argument("--schema", action="store_true", help="the JSON schema of their config sections")
    e.set_defaults(func=_cmd_engines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except _Interrupted as e:
        print(f"error: {e}", file=sys.stderr)
        return 128 + e.signum
    except SystemExit:
        raise
    except Exception as e:
        expected = any(c.__name__ in EXPECTED_ERRORS for c in type(e).__mro__)
        text = f"error: {str(e).strip() or type(e).__name__}"
        if type(e).__name__ in ("CountMismatchError", "NotAllDatasetsRan", "RunsFailed"):
            print(text, file=sys.stderr)  # a line per dataset: those lines are the point
        else:
            print(text.splitlines()[0], file=sys.stderr)
        if not expected:
            traceback.print_exc()
        return 1
    return 0
