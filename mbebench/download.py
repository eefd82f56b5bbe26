"""Fetch one dataset archive: retried, checksummed, atomic.

``dest`` only ever changes by an atomic rename of a complete, verified file,
so an interrupted or failed download can never be mistaken for a good one
(and a good file already there survives a failed refresh).  The sidecar
``<dest>.sha256`` is written after the rename: a sidecar that does not match
its file betrays a crash between the two steps.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import requests

from mbebench.atomic import atomic_path, write_text

CHUNK = 1 << 20
PROGRESS_MIN_BYTES = 5 * 1024 * 1024


class DownloadError(RuntimeError):
    """A download failed for good; the message is one line naming dataset and URL."""


class _Retryable(Exception):
    """A failure worth another attempt (network hiccup, 5xx, short body)."""


class _Fatal(Exception):
    """A failure that another attempt would repeat (4xx, bad checksum, no file)."""


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
    progress: bool = True,
) -> dict:
    """Download ``url`` to ``dest``; return {url, path, bytes, sha256, seconds, attempts}.

    ``retries`` is the total number of attempts (at least one); attempt n+1
    waits ``backoff * 2**(n-1)`` seconds.  Supports http(s), ``file://`` URLs
    and plain local paths.  Raises :class:`DownloadError`.
    """
    dest = Path(dest)
    try:
        scheme = _scheme(url)
    except _Fatal as e:
        raise DownloadError(_message(dataset, url, 1, e)) from None
    want = sha256.strip().lower() if sha256 else None
    attempts = max(1, int(retries))
    t0 = time.monotonic()
    for attempt in range(1, attempts + 1):
        try:
            nbytes, digest = _fetch_once(
                url, scheme, dest, dataset, want, (connect_timeout, read_timeout), progress
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
            time.sleep(backoff * 2 ** (attempt - 1))
    write_text(dest.with_name(dest.name + ".sha256"), f"{digest}  {dest.name}\n")
    return {
        "url": url,
        "path": str(dest),
        "bytes": nbytes,
        "sha256": digest,
        "seconds": round(time.monotonic() - t0, 3),
        "attempts": attempt,
    }


def _message(dataset: str, url: str, attempt: int, cause: Exception) -> str:
    tries = "1 attempt" if attempt == 1 else f"{attempt} attempts"
    return f"dataset {dataset!r}: download of {url} failed after {tries}: {_one_line(str(cause))}"


def _one_line(text: str) -> str:
    return " ".join(text.split())[:300]


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


def _fetch_once(url, scheme, dest, dataset, want, timeouts, progress) -> tuple[int, str]:
    """One attempt into a temp file beside ``dest``; renamed over it only if good."""
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as out:
            if scheme == "http":
                nbytes, digest = _http(url, out, dataset, timeouts, progress)
            else:
                nbytes, digest = _local(url, out)
        if want and digest != want:
            raise _Fatal(f"sha256 mismatch: expected {want}, got {digest}")
    return nbytes, digest


def _local(url: str, out) -> tuple[int, str]:
    if url.lower().startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))
    else:
        path = Path(url)
    h = hashlib.sha256()
    try:
        with open(path, "rb") as src:
            shutil.copyfileobj(_HashingReader(src, h), out, CHUNK)
    except FileNotFoundError:
        raise _Fatal(f"no such file {path}") from None
    except IsADirectoryError:
        raise _Fatal(f"{path} is a directory") from None
    except OSError as e:
        raise _Retryable(f"cannot read {path}: {e.strerror}") from None
    return out.tell(), h.hexdigest()


class _HashingReader:
    def __init__(self, f, h):
        self.f, self.h = f, h

    def read(self, n=-1):
        data = self.f.read(n)
        self.h.update(data)
        return data


def _http(url, out, dataset, timeouts, progress) -> tuple[int, str]:
    try:
        with requests.get(url, stream=True, timeout=timeouts) as r:
            _check_status(r)
            expected = _expected_length(r)
            h = hashlib.sha256()
            n = 0
            report = _Progress(dataset, expected if progress else None)
            for chunk in r.iter_content(CHUNK):
                out.write(chunk)
                h.update(chunk)
                n += len(chunk)
                report(n)
    except requests.exceptions.Timeout as e:
        kind = "connect" if isinstance(e, requests.exceptions.ConnectTimeout) else "read"
        raise _Retryable(f"{kind} timeout") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError) as e:
        raise _Retryable(_network_cause(e)) from None
    except requests.exceptions.RequestException as e:
        raise _Fatal(_one_line(str(e)) or type(e).__name__) from None
    if expected is not None and n != expected:
        raise _Retryable(f"truncated body: got {n} of {expected} bytes")
    return n, h.hexdigest()


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
    return _one_line(text) or type(e).__name__


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
