"""Atomic writes: all or nothing, with the mode a plain open would give."""

import os
import stat

import pytest

from mbebench import atomic


@pytest.fixture
def umask():
    old = os.umask(0o022)
    try:
        yield lambda m: os.umask(m)
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_written_files_follow_the_umask(tmp_path, umask, mask, mode):
    umask(mask)
    assert atomic.current_umask() == mask
    out = tmp_path / "table.md"
    atomic.write_text(out, "x\n")
    assert stat.S_IMODE(out.stat().st_mode) == mode
    with atomic.atomic_path(tmp_path / "plot.png") as tmp:  # what savefig writes through
        tmp.write_bytes(b"png")
    assert stat.S_IMODE((tmp_path / "plot.png").stat().st_mode) == mode


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    out = tmp_path / "row.json"
    atomic.write_json(out, {"count": 1})
    with pytest.raises(RuntimeError), atomic.atomic_path(out) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert out.read_text() == '{\n  "count": 1\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["row.json"]


def test_a_stop_signal_as_the_temp_file_is_made_leaves_no_temp(tmp_path, monkeypatch):
    """SIGTERM (raised as an exception, as the CLI does) right after the temp file exists,
    before the write starts: the file goes with it."""
    import signal

    class Stopped(BaseException):
        pass

    def stop(signum, frame):
        raise Stopped

    real = os.open

    def open_then_signal(*a, **k):
        made = real(*a, **k)
        os.kill(os.getpid(), signal.SIGTERM)
        return made

    monkeypatch.setattr(atomic.os, "open", open_then_signal)
    old = signal.signal(signal.SIGTERM, stop)
    try:
        with pytest.raises(Stopped), atomic.atomic_path(tmp_path / "row.json") as tmp:
            tmp.write_text("never")
    finally:
        signal.signal(signal.SIGTERM, old)
    assert list(tmp_path.iterdir()) == []
