"""The names ``python -m mbebench tables`` and ``check`` (mbebench/cli.py) call; the
tables themselves live in :mod:`mbebench.report`, one module each."""

from mbebench.report import write_tables as write_all
from mbebench.report.agreement import (
    CountMismatchError,
    NotAllDatasetsRan,
    agreement_report,
    check_agreement,
    check_all,
)

__all__ = ["CountMismatchError", "NotAllDatasetsRan", "agreement_report", "check_agreement",
           "check_all", "write_all"]
