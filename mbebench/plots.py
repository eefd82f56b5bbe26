"""The name ``python -m mbebench plots`` (mbebench/cli.py) calls; the figures
themselves live in :mod:`mbebench.report`, one module each."""

from mbebench.report import write_figures as write_all

__all__ = ["write_all"]
