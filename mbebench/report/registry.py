"""Every table and figure of the report, once: its name, formats, the module that makes
it, the rule that writes it and the caption the Snakemake report shows with it.

The rules (``workflow/rules/common.smk``, ``aggregate.smk``) take their output lists from
here, and :func:`mbebench.report.write_tables` / ``write_figures`` their file names;
``tests/test_report_registry.py`` checks the rules' outputs against it.  Imports nothing
heavy: the Snakefile reads it at every start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TABLES_DIR = "results/tables"
PLOTS_DIR = "results/plots"


@dataclass(frozen=True)
class Output:
    name: str  # the file stem: results/<folder>/<name>.<format>
    formats: tuple[str, ...]
    module: str  # mbebench.report.<module> makes it
    rule: str  # the Snakemake rule that writes it
    shown: str | None = None  # the format shown in the Snakemake report, with <name>.rst

    @property
    def folder(self) -> str:
        return PLOTS_DIR if self.rule == "plots" else TABLES_DIR

    @property
    def category(self) -> str:
        return "Plots" if self.rule == "plots" else "Tables"

    def file(self, fmt: str, out_dir: str | os.PathLike | None = None) -> str:
        """The path of one format (under ``out_dir`` instead of the results folder)."""
        if fmt not in self.formats:
            raise KeyError(f"{self.name} has no {fmt} file (it has {', '.join(self.formats)})")
        return str(Path(out_dir if out_dir is not None else self.folder) / f"{self.name}.{fmt}")

    def files(self, out_dir: str | os.PathLike | None = None) -> list[str]:
        return [self.file(fmt, out_dir) for fmt in self.formats]

    @property
    def caption(self) -> str | None:
        """The caption file, relative to ``workflow/report/``."""
        return f"{self.name}.rst" if self.shown else None


OUTPUTS: tuple[Output, ...] = (
    Output("summary", ("csv", "md"), "summary", "tables", shown="csv"),
    Output("speedup", ("csv", "md", "tex"), "speedup", "tables", shown="csv"),  # Table I
    Output("vs_paper", ("csv", "md"), "vs_paper", "tables", shown="csv"),
    Output("vs_paper_speedups", ("csv",), "vs_paper", "tables", shown="csv"),
    Output("agreement", ("txt",), "agreement", "check_counts", shown="txt"),
    Output("closing", ("txt",), "closing", "closing", shown="txt"),  # mbebench.closing
    Output("workload", ("png", "pdf"), "workload", "plots", shown="png"),  # Fig. 6
    Output("breakdown", ("png", "pdf"), "breakdown", "plots", shown="png"),  # Fig. 7
    Output("scaling", ("png", "pdf"), "scaling", "plots", shown="png"),  # ParMBE
    Output("time_vs_size", ("png", "pdf"), "time_vs_size", "plots", shown="png"),
)
BY_NAME = {o.name: o for o in OUTPUTS}


def of_rule(rule: str) -> list[Output]:
    return [o for o in OUTPUTS if o.rule == rule]


def rule_files(rule: str) -> list[str]:
    """Every file ``rule`` writes, in registry order."""
    return [f for o in of_rule(rule) for f in o.files()]


def rule_outputs(rule: str, report, caption_dir: str = "../report") -> list:
    """``rule``'s output list for Snakemake: the shown format of each wrapped in ``report``
    (Snakemake's ``report()``) with its caption, the other formats plain."""
    out = []
    for o in of_rule(rule):
        for fmt in o.formats:
            path = o.file(fmt)
            if fmt == o.shown:
                path = report(path, caption=f"{caption_dir}/{o.caption}", category=o.category)
            out.append(path)
    return out
