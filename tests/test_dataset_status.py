"""mbebench.dataset_status: the status files of download and convert, and the retry token
that makes Snakemake run an unavailable dataset's steps again (and only those)."""

from __future__ import annotations

import json
import subprocess
import sys

from mbebench import dataset_status


def _py(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mbebench", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_retry_token_is_stable_while_ok_and_new_while_unavailable(tmp_path):
    meta, csr = tmp_path / "d.json", tmp_path / "d.csr"
    assert dataset_status.retry_token(meta) == "0"  # no output yet: the job runs anyway
    meta.write_text(json.dumps({"status": "ok", "retry": "0"}))
    csr.write_bytes(b"x")
    assert dataset_status.retry_token(meta, need=[csr]) == "0"  # what it ran with: params unchanged
    csr.unlink()
    assert dataset_status.retry_token(meta, need=[csr]) == "1"  # its CSR is gone: run it again
    dataset_status.write_unavailable(meta, dataset="d", step="convert", reason="bad\nline",
                                     retry="1")
    assert dataset_status.retry_token(meta) == "2"  # every run tries again ...
    assert dataset_status.unavailable_reason(meta) == "bad line"
    meta.write_text(json.dumps({"status": "ok", "retry": "2"}))
    assert dataset_status.retry_token(meta) == "2"  # ... and once it worked, it is left alone
    meta.write_text(json.dumps({"n_left": 3}))  # a meta from before statuses: ok, token 0
    assert dataset_status.retry_token(meta) == "0"
    assert dataset_status.unavailable_reason(meta) is None
    meta.write_text("{not json")
    assert dataset_status.retry_token(meta) == "0"


def test_statuses_give_sizes_and_reasons(tmp_path):
    ok, bad = tmp_path / "A.json", tmp_path / "B.json"
    ok.write_text(json.dumps({"dataset": "A", "status": "ok", "n_left": 1, "n_right": 2,
                              "n_edges": 2}))
    dataset_status.write_unavailable(bad, dataset="B", step="download", reason="HTTP 404",
                                     retry="0")
    assert dataset_status.graph_sizes([ok, bad]) == {"A": {"n_left": 1, "n_right": 2, "n_edges": 2}}
    assert dataset_status.unavailable_datasets([ok, bad]) == {"B": "HTTP 404"}


def test_download_records_a_dataset_failure_and_succeeds(tmp_path):
    receipt, out = tmp_path / "g.json", tmp_path / "g.tar.bz2"
    args = ["download", "--dataset", "g", "--url", str(tmp_path / "nowhere.tar.bz2"),
            "--out", str(out), "--receipt", str(receipt), "--retry", "3"]
    res = _py(*args)  # without --record-unavailable: the job fails, as by hand
    assert res.returncode == 1 and not receipt.exists()
    res = _py(*args, "--record-unavailable")
    assert res.returncode == 0, res.stderr
    line = res.stderr.strip()
    assert "\n" not in line and line.startswith("error: dataset 'g': ") and "no such file" in line
    st = json.loads(receipt.read_text())
    assert (st["status"], st["step"], st["retry"]) == ("unavailable", "download", "3")
    assert f"error: {st['reason']}" == line and not out.exists()
    # the convert step passes the download's reason on
    meta = tmp_path / "g-meta.json"
    res = _py("convert", "--dataset", "g", "--archive", str(out), "--receipt", str(receipt),
              "--out-csr", str(tmp_path / "g.csr"), "--out-meta", str(meta),
              "--record-unavailable", "--retry", "5")
    assert res.returncode == 0, res.stderr
    st2 = json.loads(meta.read_text())
    assert (st2["status"], st2["step"], st2["reason"], st2["retry"]) == (
        "unavailable", "download", st["reason"], "5")


def test_convert_records_a_missing_path_as_unavailable(tmp_path):
    meta = tmp_path / "m.json"
    base = ["convert", "--dataset", "m", "--edges", str(tmp_path / "out.none"),
            "--out-csr", str(tmp_path / "m.csr"), "--out-meta", str(meta)]
    assert _py(*base).returncode == 1 and not meta.exists()
    res = _py(*base, "--record-unavailable", "--retry", "0")
    assert res.returncode == 0, res.stderr
    assert json.loads(meta.read_text())["reason"] == (
        f"dataset 'm': reading {tmp_path / 'out.none'} failed: No such file or directory")
    # a good file: status ok with the token it ran with
    edges = tmp_path / "out.ok"
    edges.write_text("% bip unweighted\n1 1\n2 1\n")
    res = _py(*base[:4], str(edges), *base[5:], "--record-unavailable", "--retry", "7")
    assert res.returncode == 0, res.stderr
    st = json.loads(meta.read_text())
    assert (st["status"], st["retry"], st["n_edges"]) == ("ok", "7", 2)


def test_only_the_steps_own_errors_are_the_datasets_fault():
    from mbebench.archive import ArchiveError
    from mbebench.convert import ConvertIOError
    from mbebench.download import DownloadError

    assert dataset_status.is_dataset_error(DownloadError("x"), dataset_status.DOWNLOAD_ERRORS)
    assert dataset_status.is_dataset_error(ConvertIOError("x"), dataset_status.CONVERT_ERRORS)
    assert dataset_status.is_dataset_error(ArchiveError("x"), dataset_status.CONVERT_ERRORS)
    # a bug is a failed job, never an unavailable dataset
    for bug in (KeyError("x"), TypeError("x"), OSError("x")):
        errors = dataset_status.CONVERT_ERRORS | dataset_status.DOWNLOAD_ERRORS
        assert not dataset_status.is_dataset_error(bug, errors)


def test_a_conversion_is_finished_only_for_the_archive_the_config_names(tmp_path):
    """Issue 19: a finished conversion is not redone by a download that re-runs (its receipt
    is then an ancient input), but only while it is of the archive the config asks for."""
    receipt, meta, graph = tmp_path / "r.json", tmp_path / "m.json", tmp_path / "g.csr"
    name, sha = "download.tsv.x.tar.bz2", "a" * 64
    dataset_status.write_receipt(receipt, {"url": f"file:///mirror/{name}", "sha256": sha},
                         dataset="x", retry="0")
    meta.write_text(json.dumps({"status": "ok", "archive_sha256": sha}))
    graph.write_bytes(b"csr")
    assert dataset_status.converted(receipt, meta, graph, None, name)
    # the config's checksum
    assert dataset_status.converted(receipt, meta, graph, sha.upper(), name)
    assert not dataset_status.converted(receipt, meta, graph, "b" * 64, name)
    assert not dataset_status.converted(receipt, meta, graph, None, "download.tsv.other.tar.bz2")
    meta.write_text(json.dumps({"status": "ok", "archive_sha256": "c" * 64}))  # another archive
    assert not dataset_status.converted(receipt, meta, graph, None, name)
    meta.write_text(json.dumps({"status": "ok"}))  # a meta from before it was recorded
    assert dataset_status.converted(receipt, meta, graph, None, name)
    graph.unlink()
    assert not dataset_status.converted(receipt, meta, graph, None, name)
    graph.write_bytes(b"csr")
    dataset_status.write_unavailable(receipt, dataset="x", step="download", reason="gone",
                                     retry="1")
    assert not dataset_status.converted(receipt, meta, graph, None, name)
