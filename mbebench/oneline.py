"""Messages on one line: a log line, a table cell or a status file holds no line breaks."""

from __future__ import annotations

from typing import Any


def one_line(text: Any) -> str:
    """``text`` with every run of white space (line breaks included) made one space."""
    return " ".join(str(text or "").split())


def error_line(e: BaseException) -> str:
    """An exception's message on one line, or its type's name when the message is empty."""
    return one_line(e) or type(e).__name__


def typed_error_line(e: BaseException) -> str:
    """``Type: message`` of an exception, its first line only (the rest is a traceback's)."""
    return one_line(f"{type(e).__name__}: {e}".splitlines()[0])
