"""The kernel's numbering: :mod:`cumbe.consts`, outside this package so that host code
reads it without importing numba (this package's ``__init__`` imports numba.cuda)."""

from cumbe import consts as _consts  # noqa: F401  (so that jitcache's digest of the kernel reaches it)
from cumbe.consts import *  # noqa: F401,F403
