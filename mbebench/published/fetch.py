"""Fetching a published code's source: GitHub's archive of one commit, verified by that commit.

The download goes through :func:`mbebench.download.fetch` (retries, a deadline over all
attempts, an atomic rename of a complete file), from GitHub or from the mirror the config's
``published.github_url`` names: an ``http(s)://`` or ``file://`` URL, or a local folder,
holding ``<owner>/<repo>/archive/<commit>.tar.gz`` as GitHub does.

What is checked before the archive is used (:func:`verify`):

* the commit id in the tar's pax global header (GitHub writes it there, as ``git archive``
  does; ``git get-tar-commit-id`` reads it) is the pinned commit;
* every member lies under the one top folder ``<repo>-<commit>/`` (no absolute paths, no
  ``..``, no links pointing out of it);
* the digest of the files the build reads (:func:`tree_digest`) is the pinned one;
* the archive's own sha256, when the code pins one (GitHub does not promise the bytes of an
  archive stay the same, which is why the pin is on the commit and the files).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
from pathlib import Path, PurePosixPath

from mbebench.atomic import write_json
from mbebench.download import DownloadError, fetch
from mbebench.published.codes import GITHUB, Repo


class SourceError(RuntimeError):
    """The archive is not the pinned commit's source; the message is one line."""


def archive_path(root: str | Path, repo: Repo) -> Path:
    return Path(root) / "archives" / f"{repo.slug}.tar.gz"


def receipt_path(root: str | Path, repo: Repo) -> Path:
    return Path(root) / "archives" / f"{repo.slug}.json"


def download(repo: Repo, root: str | Path, *, github_url: str = GITHUB, retry: str = "0",
             **fetch_options) -> dict:
    """Fetch and verify ``repo``'s archive into ``<root>/archives/``; write its receipt.

    Returns the receipt: ``status`` ``ok`` (with ``tree_sha256``) or ``failed`` with the
    one-line ``reason`` (a download that failed for good, or an archive that is not the
    pinned source).  The archive stays only when it verified.  ``retry`` is the pipeline's
    retry token (:func:`mbebench.dataset_status.retry_token`), kept in the receipt."""
    dest = archive_path(root, repo)
    dest.parent.mkdir(parents=True, exist_ok=True)
    url = repo.url(github_url or GITHUB)
    receipt: dict = {"repo": f"{repo.owner}/{repo.name}", "commit": repo.commit, "url": url,
                     "retry": retry}
    try:
        got = fetch(url, dest, dataset=f"{repo.owner}/{repo.name}", sha256=repo.archive_sha256,
                    check_archive_file=False, **fetch_options)
        receipt.update(bytes=got["bytes"], archive_sha256=got["sha256"],
                       attempts=got["attempts"])
        receipt["tree_sha256"] = verify(dest, repo)
        receipt["status"] = "ok"
    except (DownloadError, SourceError) as e:
        dest.unlink(missing_ok=True)
        receipt.update(status="failed", reason=str(e))
    write_json(receipt_path(root, repo), receipt)
    return receipt


def verify(archive: str | Path, repo: Repo) -> str:
    """The archive's tree digest, if it is ``repo``'s pinned source; else SourceError."""
    where = f"{repo.owner}/{repo.name}@{repo.commit[:12]}"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            commit = tar.pax_headers.get("comment", "")
            if commit != repo.commit:
                raise SourceError(f"{where}: the archive is of commit {commit or '(none)'!r}, "
                                  "not the pinned one (pax header)")
            members = tar.getmembers()
            _check_members(members, repo.top, where)
            digest = tree_digest(tar, members, repo)
    except (tarfile.TarError, OSError, EOFError) as e:
        raise SourceError(f"{where}: unreadable archive {archive}: {e}") from None
    if digest != repo.tree_sha256:
        raise SourceError(f"{where}: the sources differ from the pinned ones (tree sha256 "
                          f"{digest}, expected {repo.tree_sha256})")
    return digest


def _check_members(members: list[tarfile.TarInfo], top: str, where: str) -> None:
    for m in members:
        path = PurePosixPath(m.name)
        if path.is_absolute() or ".." in path.parts or path.parts[:1] != (top,):
            raise SourceError(f"{where}: member {m.name!r} lies outside the top folder {top}/")
        if m.issym() or m.islnk():
            target = PurePosixPath(m.linkname)
            inside = path.parent / target if m.issym() else target
            if target.is_absolute() or _escapes(inside, top):
                raise SourceError(f"{where}: link {m.name!r} points outside {top}/")
        elif not (m.isfile() or m.isdir()):
            raise SourceError(f"{where}: member {m.name!r} is neither a file nor a folder")


def _escapes(path: PurePosixPath, top: str) -> bool:
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 1:
            return True
    return path.parts[:1] != (top,)


def _covered(rel: str, repo: Repo) -> bool:
    inside = any(rel == p or rel.startswith(p + "/") for p in repo.tree_paths)
    excluded = any(rel == p or rel.startswith(p + "/") for p in repo.tree_exclude)
    return inside and not excluded


def tree_digest(tar: tarfile.TarFile, members: list[tarfile.TarInfo], repo: Repo) -> str:
    """sha256 over the sorted lines ``<path> <sha256 of content>`` of the files under
    ``repo.tree_paths`` (a symlink's content is its target): the same for any archive of
    the commit, however it was compressed or whichever tool wrote it."""
    lines = []
    prefix = repo.top + "/"
    for m in members:
        rel = m.name[len(prefix):]
        if not (m.isfile() or m.issym()) or not _covered(rel, repo):
            continue
        if m.issym():
            data = m.linkname.encode()
        else:
            f = tar.extractfile(m)
            data = f.read() if f is not None else b""
        lines.append(f"{rel} {hashlib.sha256(data).hexdigest()}\n")
    return hashlib.sha256("".join(sorted(lines)).encode()).hexdigest()


def tree_digest_of(archive: str | Path, repo: Repo) -> str:
    """The tree digest of an archive, without the other checks (to pin a new commit)."""
    with tarfile.open(archive, "r:gz") as tar:
        return tree_digest(tar, tar.getmembers(), repo)


def extract(archive: str | Path, repo: Repo, dest: str | Path) -> Path:
    """Unpack a verified archive's top folder into ``dest`` (replaced); returns it."""
    dest = Path(dest)
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.with_name(dest.name + ".unpack")
    shutil.rmtree(staging, ignore_errors=True)
    with tarfile.open(archive, "r:gz") as tar:
        _check_members(tar.getmembers(), repo.top, f"{repo.owner}/{repo.name}")
        tar.extractall(staging, filter="tar")
    (staging / repo.top).rename(dest)
    shutil.rmtree(staging, ignore_errors=True)
    return dest


def read_receipt(path: str | Path) -> dict | None:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
