"""Downloads against a local HTTP server that misbehaves on request.

The server binds 127.0.0.1 on a free port, runs in daemon threads and shuts
down at the end of the module (or after 60 s, whichever is first), so a
hanging test cannot keep it alive.  Timeouts are short and backoff is zero.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import resource
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections import Counter

import pytest
from interrupting import files_in, sigterm_once_started
from slowness import bound

from mbebench.download import DownloadError, fetch, konect_url


def tar_bz2(edges: bytes, name: str = "toy") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:bz2") as tf:
        ti = tarfile.TarInfo(f"{name}/out.{name}")
        ti.size = len(edges)
        tf.addfile(ti, io.BytesIO(edges))
    return buf.getvalue()


EDGES = b"% bip unweighted\n" + b"".join(
    f"{i} {i * 7919 % 2999 + 1}\n".encode() for i in range(1, 3000)
)
BODY = tar_bz2(EDGES)  # a real KONECT-shaped archive: downloads are checked for being one
assert len(BODY) > 2000
BIG = bytes(range(256)) * (6 * 1024 * 1024 // 256 + 1)  # > 5 MB: progress lines
HTML = b"<html><head><title>Sign in to the hotel Wi-Fi</title></head></html>\n"
READ_TIMEOUT = 0.3
FAST = {"connect_timeout": 2, "read_timeout": READ_TIMEOUT, "backoff": 0, "retries": 3}


class Handler(http.server.BaseHTTPRequestHandler):
    hits: Counter = Counter()

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        path = self.path.split("?")[0]
        n = self.hits[path] = self.hits[path] + 1
        route = ROUTES.get(path.rsplit("/", 1)[0] if path.count("/") > 1 else path)
        if route is None:
            return self._send(404, b"not here")
        route(self, n)

    def _send(self, status, body, length=None, headers=()):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


def _ok(h, n):
    h._send(200, BODY)


def _big(h, n):
    h._send(200, BIG)


def _flaky(h, n):
    # Every request key (the path's last part) fails once, then works.
    h._send(500, b"oops") if n == 1 else h._send(200, BODY)


def _always_500(h, n):
    h._send(503, b"down")


def _forbidden(h, n):
    h._send(403, b"no")


def _truncate(h, n):
    h._send(200, BODY[:1000], length=len(BODY))
    h.close_connection = True


def _truncate_once(h, n):
    _truncate(h, n) if n == 1 else _ok(h, n)


def _stall_body(h, n):
    h.send_response(200)
    h.send_header("Content-Length", str(len(BODY)))
    h.end_headers()
    h.wfile.write(BODY[:100])
    h.wfile.flush()
    time.sleep(READ_TIMEOUT * 4)


def _stall_headers(h, n):
    time.sleep(READ_TIMEOUT * 4)


def _no_length(h, n):
    h.send_response(200)
    h.end_headers()
    h.wfile.write(BODY)
    h.close_connection = True


def _portal(h, n):
    # A captive portal: status 200, a complete body, but an HTML page.
    h._send(200, HTML, headers=[("Content-Type", "text/html")])


def _cut_no_length(h, n):
    # The connection drops mid-stream and no Content-Length tells the client.
    h.send_response(200)
    h.end_headers()
    h.wfile.write(BODY[: len(BODY) - 50])
    h.close_connection = True


def _cut_no_length_once(h, n):
    _cut_no_length(h, n) if n == 1 else _no_length(h, n)


TRICKLE_GAP = 0.05


def _trickle_body(h, n):
    # One byte at a time, each well within the read timeout: only a total deadline stops it.
    h.send_response(200)
    h.send_header("Content-Length", str(len(BODY)))
    h.end_headers()
    for i in range(len(BODY)):
        h.wfile.write(BODY[i : i + 1])
        h.wfile.flush()
        time.sleep(TRICKLE_GAP)


def _trickle_headers(h, n):
    h.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
    for _ in range(400):
        h.wfile.write(b"a")
        h.wfile.flush()
        time.sleep(TRICKLE_GAP)


ROUTES = {
    "/ok": _ok, "/big": _big, "/flaky": _flaky, "/500": _always_500, "/403": _forbidden,
    "/truncate": _truncate, "/truncate-once": _truncate_once, "/stall-body": _stall_body,
    "/stall-headers": _stall_headers, "/no-length": _no_length, "/portal": _portal,
    "/cut-no-length": _cut_no_length, "/cut-no-length-once": _cut_no_length_once,
    "/trickle-body": _trickle_body, "/trickle-headers": _trickle_headers,
}


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    watchdog = threading.Timer(60, httpd.shutdown)
    watchdog.daemon = True
    watchdog.start()
    Handler.hits.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    watchdog.cancel()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "downloads"
    d.mkdir()
    return d


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def expect_failure(url, dest, *fragments, **kw):
    with pytest.raises(DownloadError) as exc:
        fetch(url, dest, dataset="Toy", progress=False, **{**FAST, **kw})
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(f"dataset 'Toy': download of {url} failed")
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


# ---------------------------------------------------------------------------


def test_serves_file_and_writes_sidecar(server, folder):
    dest = folder / "a.tar.bz2"
    meta = fetch(f"{server}/ok", dest, dataset="Toy", sha256=sha(BODY).upper(), **FAST)
    assert dest.read_bytes() == BODY
    assert (folder / "a.tar.bz2.sha256").read_text() == f"{sha(BODY)}  a.tar.bz2\n"
    assert meta["bytes"] == len(BODY) and meta["sha256"] == sha(BODY)
    assert meta["attempts"] == 1 and meta["path"] == str(dest) and meta["url"] == f"{server}/ok"
    assert meta["seconds"] >= 0
    assert files_in(folder) == ["a.tar.bz2", "a.tar.bz2.sha256"]


def test_creates_missing_folder(server, tmp_path):
    dest = tmp_path / "x" / "y" / "a.bin"
    fetch(f"{server}/ok", dest, dataset="Toy", **FAST)
    assert dest.read_bytes() == BODY


def test_connection_refused(folder):
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x"
    msg = expect_failure(url, folder / "a", "after 3 attempts", "connection")
    assert "refused" in msg.lower()
    assert files_in(folder) == []


def test_404_not_retried(server, folder):
    url = f"{server}/missing/404a"
    expect_failure(url, folder / "a", "after 1 attempt", "HTTP 404")
    assert Handler.hits["/missing/404a"] == 1
    assert files_in(folder) == []


def test_403_not_retried(server, folder):
    expect_failure(f"{server}/403", folder / "a", "after 1 attempt", "HTTP 403")
    assert Handler.hits["/403"] == 1


def test_500_then_200_retries(server, folder):
    dest = folder / "a"
    meta = fetch(f"{server}/flaky/k1", dest, dataset="Toy", progress=False, **FAST)
    assert meta["attempts"] == 2 and Handler.hits["/flaky/k1"] == 2
    assert dest.read_bytes() == BODY


def test_always_500_gives_up(server, folder):
    url = f"{server}/500/k2"
    expect_failure(url, folder / "a", "after 3 attempts", "HTTP 503")
    assert Handler.hits["/500/k2"] == 3
    assert files_in(folder) == []


def test_retries_is_total_attempts(server, folder):
    expect_failure(f"{server}/500/k3", folder / "a", "after 5 attempts", retries=5)
    assert Handler.hits["/500/k3"] == 5


def test_backoff_is_exponential(server, folder):
    t = time.monotonic()
    expect_failure(f"{server}/500/k4", folder / "a", retries=3, backoff=0.1)
    assert time.monotonic() - t >= 0.1 + 0.2


def test_truncated_body(server, folder):
    msg = expect_failure(f"{server}/truncate", folder / "a", "after 3 attempts")
    assert "truncated" in msg
    assert Handler.hits["/truncate"] == 3
    assert files_in(folder) == []


def test_truncated_once_then_complete(server, folder):
    meta = fetch(f"{server}/truncate-once/k5", folder / "a", dataset="Toy", **FAST)
    assert meta["attempts"] == 2 and (folder / "a").read_bytes() == BODY


def test_stall_in_body_times_out(server, folder):
    t = time.monotonic()
    expect_failure(f"{server}/stall-body", folder / "a", "after 2 attempts", "timeout", retries=2)
    assert time.monotonic() - t < 2 * READ_TIMEOUT * 4  # gave up at the timeout, not the stall
    assert files_in(folder) == []


def test_stall_before_headers_times_out(server, folder):
    expect_failure(f"{server}/stall-headers", folder / "a", "after 1 attempt", "read timeout",
                   retries=1)


def test_wrong_checksum_not_retried(server, folder):
    url = f"{server}/ok/k6"
    expect_failure(
        url, folder / "a", "after 1 attempt", "sha256 mismatch", sha(BODY), sha256="0" * 64
    )
    assert Handler.hits["/ok/k6"] == 1
    assert files_in(folder) == []


def test_unknown_length_is_accepted(server, folder):
    meta = fetch(f"{server}/no-length", folder / "a", dataset="Toy", sha256=sha(BODY), **FAST)
    assert meta["bytes"] == len(BODY)


@pytest.mark.parametrize(
    "route", ["/500/k7", "/truncate", "/ok/k8", "/stall-body", "/403", "/portal", "/cut-no-length"]
)
def test_failure_keeps_existing_dest_and_sidecar(server, folder, route):
    dest = folder / "a"
    dest.write_bytes(b"old good file")
    (folder / "a.sha256").write_text(f"{sha(b'old good file')}  a\n")
    extra = {"sha256": "0" * 64} if route.startswith("/ok") else {}
    expect_failure(f"{server}{route}", dest, retries=2, **extra)
    assert dest.read_bytes() == b"old good file"
    assert (folder / "a.sha256").read_text() == f"{sha(b'old good file')}  a\n"
    assert files_in(folder) == ["a", "a.sha256"]


def test_success_replaces_existing_dest(server, folder):
    dest = folder / "a"
    dest.write_bytes(b"stale")
    fetch(f"{server}/ok", dest, dataset="Toy", **FAST)
    assert dest.read_bytes() == BODY
    assert (folder / "a.sha256").read_text().split()[0] == sha(BODY)


def test_progress_for_big_files(server, folder, capsys):
    fetch(f"{server}/big", folder / "big", dataset="Toy", sha256=sha(BIG), check_archive_file=False,
          **FAST)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "%" in ln]
    assert 5 <= len(lines) <= 11
    assert lines[-1].startswith("dataset 'Toy': 100% of")


def test_no_progress_for_small_files(server, folder, capsys):
    fetch(f"{server}/ok", folder / "a", dataset="Toy", **FAST)
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------
# Nothing untrustworthy is cached: the file must be a readable archive.


def test_html_page_with_status_200_is_not_cached(server, folder):
    url = f"{server}/portal/k9"
    msg = expect_failure(url, folder / "a", "after 1 attempt", "no usable tar.bz2 archive",
                         "not a tar.bz2 archive", "starts with b'<html>")
    assert Handler.hits["/portal/k9"] == 1  # an HTML page will not turn into an archive
    assert files_in(folder) == []
    assert len(msg) < 400


def test_stream_cut_without_length_is_retried_then_refused(server, folder):
    url = f"{server}/cut-no-length/k10"
    expect_failure(url, folder / "a", "after 3 attempts", "truncated archive")
    assert Handler.hits["/cut-no-length/k10"] == 3
    assert files_in(folder) == []


def test_stream_cut_once_then_complete(server, folder):
    meta = fetch(f"{server}/cut-no-length-once/k11", folder / "a", dataset="Toy", **FAST)
    assert meta["attempts"] == 2 and (folder / "a").read_bytes() == BODY


def test_archive_cut_only_in_its_last_bytes_is_refused(tmp_path, folder):
    # tarfile alone reads the whole member list from this file: only reading
    # the bzip2 stream to its end marker shows that it was cut.
    src = tmp_path / "cut.tar.bz2"
    src.write_bytes(BODY[:-3])
    expect_failure(str(src), folder / "a", "truncated archive")
    assert files_in(folder) == []


def test_member_over_the_size_limit_is_refused(tmp_path, folder):
    src = tmp_path / "a.tar.bz2"
    src.write_bytes(BODY)
    expect_failure(str(src), folder / "a", "over the limit of 1000", max_member_bytes=1000)
    assert files_in(folder) == []


def test_archive_check_can_be_turned_off(server, folder):
    meta = fetch(f"{server}/portal", folder / "a", dataset="Toy", check_archive_file=False, **FAST)
    assert meta["bytes"] == len(HTML)


# ---------------------------------------------------------------------------
# A total deadline, not only a timeout per read.


def test_trickling_body_hits_the_total_deadline(server, folder):
    t = time.monotonic()
    expect_failure(f"{server}/trickle-body/k12", folder / "a", "after 1 attempt",
                   "total deadline of 0.5 s exceeded", deadline_s=0.5)
    assert time.monotonic() - t < bound(0.5 + 4 * TRICKLE_GAP + 0.5, below=10)
    assert files_in(folder) == []


def test_trickling_headers_hit_the_total_deadline(server, folder):
    t = time.monotonic()
    expect_failure(f"{server}/trickle-headers/k13", folder / "a", "total deadline of 0.5 s",
                   deadline_s=0.5)
    assert time.monotonic() - t < bound(1.5, below=10)
    assert files_in(folder) == []


def test_deadline_holds_off_the_main_thread(server, folder):
    # No SIGALRM there: the loop's own check after every read must stop the trickle.
    errors = []

    def work():
        try:
            fetch(f"{server}/trickle-body/k14", folder / "a", dataset="Toy", progress=False,
                  **{**FAST, "deadline_s": 0.5})
        except DownloadError as e:
            errors.append(str(e))

    thread = threading.Thread(target=work)
    thread.start()
    # 20 times the deadline, and a tenth of the whole trickle: however busy the machine,
    # only the deadline can have stopped it
    assert len(BODY) * TRICKLE_GAP > 10 * 10
    thread.join(10)
    assert not thread.is_alive()
    assert len(errors) == 1 and "total deadline of 0.5 s exceeded" in errors[0]
    assert files_in(folder) == []


def test_no_retry_wait_past_the_deadline(server, folder):
    t = time.monotonic()
    expect_failure(f"{server}/500/k15", folder / "a", "after 1 attempt", "HTTP 503",
                   "no time left", backoff=5, deadline_s=1)
    assert time.monotonic() - t < bound(1, below=4.5)  # (the fault: a 5-s wait)


def test_leftover_temp_files_of_a_killed_download_are_removed(server, folder):
    stale = [".a.k2j4h5g6.tmp", ".a.sha256.abcd_123.tmp"]
    kept = [".b.k2j4h5g6.tmp", ".a.not-ours.tmp", ".a.k2j4h5g6.tmp.keep"]
    for name in stale + kept:
        (folder / name).write_bytes(b"x")
    fetch(f"{server}/ok", folder / "a", dataset="Toy", **FAST)
    assert files_in(folder) == sorted(["a", "a.sha256", *kept])


# ---------------------------------------------------------------------------
# The CLI: flags, write errors and interruption.


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "mbebench", "download", *args],
                          check=False, capture_output=True, text=True, timeout=60, **kw)


def test_cli_deadline_flag(server, folder):
    r = cli("--dataset", "Toy", "--url", f"{server}/trickle-body/k16", "--out",
            str(folder / "a"), "--read-timeout", "5", "--deadline", "0.5")
    assert r.returncode == 1
    assert r.stderr.splitlines() == [r.stderr.strip()]
    assert "total deadline of 0.5 s exceeded" in r.stderr and "'Toy'" in r.stderr
    assert files_in(folder) == []


def test_cli_max_member_flag(tmp_path, folder):
    src = tmp_path / "a.tar.bz2"
    src.write_bytes(BODY)
    args = ["--dataset", "Toy", "--url", str(src), "--out", str(folder / "a")]
    r = cli(*args, "--max-member-gib", str(1000 / 2**30))
    assert r.returncode == 1 and "over the limit of 1000" in r.stderr
    assert cli(*args).returncode == 0


def _limit_file_size():
    # Writes past 64 KB fail with EFBIG, as a full disk fails with ENOSPC.
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_write_error_names_dataset_and_file(tmp_path, folder):
    src = tmp_path / "big.tar.bz2"
    src.write_bytes(tar_bz2(os.urandom(200 * 1024)))
    r = cli("--dataset", "Toy", "--url", str(src), "--out", str(folder / "a"),
            preexec_fn=_limit_file_size)
    assert r.returncode == 1
    line = r.stderr.strip()
    assert "\n" not in line
    assert "'Toy'" in line and str(src) in line and f"cannot write {folder / 'a'}" in line
    assert "File too large" in line
    assert files_in(folder) == []


def test_sigterm_mid_download_leaves_no_temp_file(server, folder):
    proc = subprocess.Popen(
        [sys.executable, "-m", "mbebench", "download", "--dataset", "Toy", "--url",
         f"{server}/trickle-body/k17", "--out", str(folder / "a"), "--read-timeout", "5"],
        stderr=subprocess.PIPE, text=True,
    )
    err = sigterm_once_started(
        proc, lambda: any(n.endswith(".tmp") for n in files_in(folder)), "the download")
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip() == "error: dataset 'Toy': interrupted by SIGTERM"
    assert files_in(folder) == []


# ---------------------------------------------------------------------------
# Local sources


def test_file_url_and_plain_path(tmp_path, folder):
    src = tmp_path / "src dir" / "download.tsv.toy.tar.bz2"
    src.parent.mkdir()
    src.write_bytes(BODY)
    by_url = fetch(src.as_uri(), folder / "u", dataset="Toy", sha256=sha(BODY))
    by_path = fetch(str(src), folder / "p", dataset="Toy", sha256=sha(BODY))
    assert (folder / "u").read_bytes() == (folder / "p").read_bytes() == BODY
    assert by_url["sha256"] == by_path["sha256"] == sha(BODY)
    assert (folder / "p.sha256").read_text() == f"{sha(BODY)}  p\n"


def test_local_missing_file(tmp_path, folder):
    url = (tmp_path / "nope.tar.bz2").as_uri()
    expect_failure(url, folder / "a", "after 1 attempt", "no such file")
    assert files_in(folder) == []


def test_local_wrong_checksum_keeps_dest(tmp_path, folder):
    src = tmp_path / "s"
    src.write_bytes(BODY)
    (folder / "a").write_bytes(b"keep")
    expect_failure(str(src), folder / "a", "sha256 mismatch", sha256="1" * 64)
    assert (folder / "a").read_bytes() == b"keep" and files_in(folder) == ["a"]


def test_unsupported_scheme(folder):
    expect_failure("ftp://example.org/x", folder / "a", "unsupported URL scheme")


@pytest.mark.parametrize(
    "base,expected",
    [
        ("http://konect.cc/files/", "http://konect.cc/files/download.tsv.marvel.tar.bz2"),
        ("http://konect.cc/files", "http://konect.cc/files/download.tsv.marvel.tar.bz2"),
        ("file:///data/mirror/", "file:///data/mirror/download.tsv.marvel.tar.bz2"),
        ("/data/mirror", "/data/mirror/download.tsv.marvel.tar.bz2"),
    ],
)
def test_konect_url(base, expected):
    assert konect_url(base, "marvel") == expected


@pytest.mark.mirror
def test_mirror_archive_over_http_with_published_checksum(konect_mirror, folder):
    sums = dict(
        reversed(line.split()) for line in (konect_mirror / "SHA256SUMS").read_text().splitlines()
    )
    name = "download.tsv.marvel.tar.bz2"
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0),
        lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(konect_mirror)),
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{httpd.server_address[1]}"
        meta = fetch(konect_url(base, "marvel"), folder / name, dataset="Marvel",
                     sha256=sums[name], **FAST)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert meta["sha256"] == sums[name]
    assert (folder / name).read_bytes() == (konect_mirror / name).read_bytes()
    local = fetch(konect_url(konect_mirror.as_uri(), "marvel"), folder / "b", dataset="Marvel",
                  sha256=sums[name])
    assert local["sha256"] == sums[name]


def _download_cmd(src: str, out, receipt, sha256: str = "") -> list[str]:
    return ["download", "--dataset", "toy", "--url", src, "--out", str(out), "--receipt",
            str(receipt), "--record-unavailable", "--retries", "1", "--sha256", sha256]


def test_a_failed_refresh_keeps_the_verified_archive_and_says_so(tmp_path, capsys):
    """Issue 19: the default server is down (the mirror was forgotten) or a retry fails: a
    checksummed archive already on disk stays, and the receipt says ok, with the failure."""
    import json

    from mbebench import cli

    good = tmp_path / "mirror.tar.bz2"
    good.write_bytes(tar_bz2(EDGES))
    out, receipt = tmp_path / "d" / "toy.tar.bz2", tmp_path / "d" / "toy.json"
    assert cli.main(_download_cmd(str(good), out, receipt)) == 0
    digest = hashlib.sha256(good.read_bytes()).hexdigest()
    gone = str(tmp_path / "no-such-mirror" / "toy.tar.bz2")
    assert cli.main(_download_cmd(gone, out, receipt)) == 0
    st = json.loads(receipt.read_text())
    assert st["status"] == "ok" and st["kept"] is True and st["sha256"] == digest, st
    assert "no such file" in st["note"] and "kept the archive downloaded before" in st["note"]
    assert out.read_bytes() == good.read_bytes()
    assert "warning: dataset 'toy': download of" in capsys.readouterr().err
    # not with another checksum in the config, nor when the file no longer matches its sidecar
    assert cli.main(_download_cmd(gone, out, receipt, sha256="0" * 64)) == 0
    assert json.loads(receipt.read_text())["status"] == "unavailable"
    out.write_bytes(out.read_bytes()[:-1])
    assert cli.main(_download_cmd(gone, out, receipt)) == 0
    assert json.loads(receipt.read_text())["status"] == "unavailable"
