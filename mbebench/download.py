"""Fetch one dataset archive: retried, checksummed, verified, atomic.

``dest`` only ever changes by an atomic rename of a complete, verified file
(the checksum when one is configured, and a full read of the tar.bz2), so an
interrupted or failed download, an HTML page served with status 200 or a
stream cut short without Content-Length can never be mistaken for a good one
(and a good file already there survives a failed refresh).  The sidecar
``<dest>.sha256`` is written after the rename: a sidecar that does not match
its file betrays a crash between the two steps.

The transfer has a total deadline over all attempts, not only a timeout per
read: a server that trickles bytes is cut off too.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import re
import signal
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import requests
import urllib3.exceptions

from mbebench.archive import DEFAULT_MAX_MEMBER_BYTES, ArchiveError, check_archive
from mbebench.atomic import atomic_path, remove_stale_temps, write_text
from mbebench.oneline import one_line

CHUNK = 1 << 20
PROGRESS_MIN_BYTES = 5 * 1024 * 1024
# A 300 MB archive at 50 KB/s takes 100 minutes.
DEFAULT_DEADLINE_S = 7200.0


class DownloadError(RuntimeError):
    """A download failed for good; the message is one line naming dataset and URL."""


class _Retryable(Exception):
    """A failure worth another attempt (network hiccup, 5xx, short body)."""


class _Fatal(Exception):
    """A failure that another attempt would repeat (4xx, bad checksum, no file)."""


class _DeadlineHit(BaseException):
    # BaseException: raised from a signal handler anywhere inside requests,
    # it must not be swallowed by an ``except Exception`` on its way out.
    pass


def konect_url(base_url: str, konect_name: str) -> str:
    """KONECT's download address for ``konect_name`` under ``base_url``."""
    sep = "" if base_url.endswith("/") else "/"
    return f"{base_url}{sep}download.tsv.{konect_name}.tar.bz2"


def fetch(
    url: str,
    dest: Path,
    *,
    dataset: str,
    sha256: str | None = None,
    connect_timeout: float = 10,
    read_timeout: float = 60,
    retries: int = 3,
    backoff: float = 1.0,
    deadline_s: float | None = DEFAULT_DEADLINE_S,
    check_archive_file: bool = True,
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES,
    progress: bool = True,
) -> dict:
    """Download ``url`` to ``dest``; return {url, path, bytes, sha256, seconds, attempts}.

    ``retries`` is the total number of attempts (at least one); attempt n+1
    waits ``backoff * 2**(n-1)`` seconds.  ``deadline_s`` bounds the whole
    transfer, all attempts and waits included (None: no bound).  With
    ``check_archive_file`` the file must be a readable KONECT tar.bz2
    (:func:`mbebench.archive.check_archive`) before it is renamed into place.
    Supports http(s), ``file://`` URLs and plain local paths.  Raises
    :class:`DownloadError`.
    """
    dest = Path(dest)
    try:
        scheme = _scheme(url)
    except _Fatal as e:
        raise DownloadError(_message(dataset, url, 1, e)) from None
    want = sha256.strip().lower() if sha256 else None
    attempts = max(1, int(retries))
    t0 = time.monotonic()
    deadline = _Deadline(t0, deadline_s)
    check = (lambda tmp: _check_archive(tmp, max_member_bytes)) if check_archive_file else None
    attempt = 1
    try:
        # Leftovers of a download that was killed (kill -9 cannot be caught).
        for p in (dest, dest.with_name(dest.name + ".sha256")):
            remove_stale_temps(p)
        for attempt in range(1, attempts + 1):
            try:
                nbytes, digest = _fetch_once(
                    url, scheme, dest, dataset, want, (connect_timeout, read_timeout), progress,
                    deadline, check,
                )
                break
            except _Fatal as e:
                raise DownloadError(_message(dataset, url, attempt, e)) from None
            except _Retryable as e:
                if attempt == attempts:
                    raise DownloadError(_message(dataset, url, attempt, e)) from None
                if progress:
                    msg = f"dataset {dataset!r}: attempt {attempt} failed ({e}), retrying"
                    print(msg, file=sys.stderr)
                wait = backoff * 2 ** (attempt - 1)
                if deadline.left() < wait:
                    cause = f"{e}; no time left for another attempt ({deadline})"
                    raise DownloadError(_message(dataset, url, attempt, cause)) from None
                time.sleep(wait)
        write_text(dest.with_name(dest.name + ".sha256"), f"{digest}  {dest.name}\n")
    except _DeadlineHit:
        raise DownloadError(_message(dataset, url, attempt, deadline.exceeded())) from None
    except OSError as e:
        # Our side failed (disk full, folder not writable): say which file.
        where = e.filename or dest
        cause = f"cannot write {where}: {e.strerror or e}"
        raise DownloadError(_message(dataset, url, attempt, cause)) from None
    return {
        "url": url,
        "path": str(dest),
        "bytes": nbytes,
        "sha256": digest,
        "seconds": round(time.monotonic() - t0, 3),
        "attempts": attempt,
    }


def kept_archive(dest: Path, sha256: str | None = None) -> dict | None:
    """The archive an earlier :func:`fetch` left at ``dest``, if it is still the file that
    was verified then: its sidecar's digest equals the file's content (and ``sha256``, when
    one is configured).  None otherwise.  A failed refresh keeps such an archive (see the
    download command): where the same content comes from does not matter, and a server that
    is down must not undo a finished dataset."""
    dest = Path(dest)
    sidecar = dest.with_name(dest.name + ".sha256")
    try:
        recorded = sidecar.read_text().split()[0].lower()
        h = hashlib.sha256()
        with open(dest, "rb") as f:
            while chunk := f.read(CHUNK):
                h.update(chunk)
        nbytes = dest.stat().st_size
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    digest = h.hexdigest()
    want = sha256.strip().lower() if sha256 else None
    if digest != recorded or (want and digest != want):
        return None
    return {"path": str(dest), "bytes": nbytes, "sha256": digest}


class _Deadline:
    def __init__(self, start: float, seconds: float | None):
        self.seconds = seconds
        self.end = math.inf if seconds is None else start + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def check(self) -> None:
        if time.monotonic() > self.end:
            raise _Fatal(self.exceeded())

    def exceeded(self) -> str:
        return f"total deadline of {self.seconds:g} s exceeded (download.deadline_s)"

    def __str__(self) -> str:
        return f"deadline {self.seconds:g} s"

    @contextlib.contextmanager
    def alarm(self):
        """Interrupt a blocking read at the deadline (a server trickling its
        headers never returns control to our loop); main thread only, and only
        when nobody else uses SIGALRM.  Elsewhere the loop's own checks apply."""
        left = self.left()
        usable = (
            math.isfinite(left)
            and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        )
        if not usable:
            yield
            return

        def _hit(signum, frame):
            raise _DeadlineHit()

        signal.signal(signal.SIGALRM, _hit)
        try:
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3))
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL)


def _check_archive(path: Path, max_member_bytes: int) -> None:
    try:
        check_archive(path, max_member_bytes=max_member_bytes)
    except ArchiveError as e:
        cause = f"downloaded file is no usable tar.bz2 archive: {e.reason}"
        with open(path, "rb") as f:
            head = f.read(40)
        if not head.startswith(b"BZh"):
            cause += f"; it starts with {head!r}"
        if e.truncated:
            raise _Retryable(cause) from None
        raise _Fatal(cause) from None


def _message(dataset: str, url: str, attempt: int, cause: Exception) -> str:
    tries = "1 attempt" if attempt == 1 else f"{attempt} attempts"
    return f"dataset {dataset!r}: download of {url} failed after {tries}: {one_line(cause)[:300]}"


def _scheme(url: str) -> str:
    """'http' (also for https), or 'file' for file:// URLs and plain paths."""
    try:
        scheme = urllib.parse.urlsplit(url).scheme.lower()
    except ValueError as e:
        raise _Fatal(f"invalid URL ({e})") from None
    if scheme in ("http", "https"):
        return "http"
    if scheme in ("file", "") or len(scheme) == 1:  # 1: a Windows drive letter
        return "file"
    raise _Fatal(f"unsupported URL scheme {scheme!r}")


def _fetch_once(
    url, scheme, dest, dataset, want, timeouts, progress, deadline, check
) -> tuple[int, str]:
    """One attempt into a temp file beside ``dest``; renamed over it only if good."""
    deadline.check()
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as out, deadline.alarm():
            if scheme == "http":
                nbytes, digest = _http(url, out, dataset, timeouts, progress, deadline)
            else:
                nbytes, digest = _local(url, out, deadline)
        if want and digest != want:
            raise _Fatal(f"sha256 mismatch: expected {want}, got {digest}")
        if check is not None:
            check(tmp)
    return nbytes, digest


def _local(url: str, out, deadline: _Deadline) -> tuple[int, str]:
    if url.lower().startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    else:
        path = Path(url)
    h = hashlib.sha256()
    try:
        src = open(path, "rb")
    except FileNotFoundError:
        raise _Fatal(f"no such file {path}") from None
    except IsADirectoryError:
        raise _Fatal(f"{path} is a directory") from None
    except OSError as e:
        raise _Retryable(f"cannot read {path}: {e.strerror}") from None
    with src:
        while True:
            try:
                chunk = src.read(CHUNK)
            except OSError as e:
                raise _Retryable(f"cannot read {path}: {e.strerror}") from None
            if not chunk:
                break
            h.update(chunk)
            out.write(chunk)  # an error here is ours (dest), reported by fetch
            deadline.check()
    return out.tell(), h.hexdigest()


def _http(url, out, dataset, timeouts, progress, deadline: _Deadline) -> tuple[int, str]:
    # No single wait may outlast the deadline.
    left = max(deadline.left(), 1e-3)
    timeouts = tuple(min(t, left) for t in timeouts)
    try:
        with requests.get(url, stream=True, timeout=timeouts) as r:
            _check_status(r)
            expected = _expected_length(r)
            h = hashlib.sha256()
            n = 0
            report = _Progress(dataset, expected if progress else None)
            # read1 returns whatever has arrived (iter_content would wait for
            # a full chunk), so a trickle still reaches the deadline check.
            while chunk := _read1(r):
                out.write(chunk)
                h.update(chunk)
                n += len(chunk)
                report(n)
                deadline.check()
    except requests.exceptions.Timeout as e:
        kind = "connect" if isinstance(e, requests.exceptions.ConnectTimeout) else "read"
        raise _Retryable(f"{kind} timeout") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as e:
        raise _Retryable(_network_cause(e)) from None
    except requests.exceptions.RequestException as e:
        raise _Fatal(one_line(e)[:300] or type(e).__name__) from None
    if expected is not None and n != expected:
        raise _Retryable(f"truncated body: got {n} of {expected} bytes")
    return n, h.hexdigest()


def _read1(r: requests.Response) -> bytes:
    """Up to CHUNK decoded bytes, urllib3's errors mapped to requests' (as iter_content does)."""
    try:
        return r.raw.read1(CHUNK, decode_content=True)
    except urllib3.exceptions.ReadTimeoutError as e:
        raise requests.exceptions.ReadTimeout(e) from None
    except urllib3.exceptions.ProtocolError as e:
        raise requests.exceptions.ChunkedEncodingError(e) from None
    except urllib3.exceptions.DecodeError as e:
        raise requests.exceptions.ContentDecodingError(e) from None
    except urllib3.exceptions.SSLError as e:
        raise requests.exceptions.SSLError(e) from None


def _check_status(r: requests.Response) -> None:
    if r.status_code >= 500:
        raise _Retryable(f"HTTP {r.status_code}")
    if r.status_code >= 400:
        raise _Fatal(f"HTTP {r.status_code}")
    if r.status_code != 200:
        raise _Fatal(f"unexpected HTTP {r.status_code}")


def _expected_length(r: requests.Response) -> int | None:
    # With a Content-Encoding, Content-Length counts the encoded bytes, not ours.
    if r.headers.get("Content-Encoding", "identity") != "identity":
        return None
    value = r.headers.get("Content-Length")
    return int(value) if value and value.isdigit() else None


def _network_cause(e: Exception) -> str:
    """The useful core of urllib3's long wrapped messages."""
    text = str(e)
    if "IncompleteRead" in text or "Connection broken" in text:
        return "connection broken mid-body (truncated)"
    if "timed out" in text.lower():
        return "read timeout"
    m = re.search(r"\[Errno -?\d+\] [^'\")]*", text)
    if m:
        return f"connection failed: {m.group(0).strip()}"
    return one_line(text)[:300] or type(e).__name__


class _Progress:
    """A stderr line every ~10% for big downloads of known size."""

    def __init__(self, dataset: str, total: int | None):
        self.dataset = dataset
        self.total = total if total and total > PROGRESS_MIN_BYTES else None
        self.next_tenth = 1

    def __call__(self, n: int) -> None:
        if self.total is None:
            return
        tenth = n * 10 // self.total
        if tenth >= self.next_tenth:
            print(
                f"dataset {self.dataset!r}: {tenth * 10}% of {self.total / 1e6:.1f} MB",
                file=sys.stderr,
            )
            self.next_tenth = tenth + 1
