"""Every file the pipeline writes is named once, in mbebench/paths.py (the report's tables and
figures in mbebench/report/registry.py): the rules and the modules that plan, gather and
look at runs take their paths from there."""

from __future__ import annotations

import ast
import re

from workflow_helpers import REPO

from mbebench import paths

TOP = re.compile(r"^(results|resources|logs)/")
USERS = ("mbebench/plan.py", "mbebench/gather.py", "mbebench/status.py", "mbebench/resume.py",
         "mbebench/closing.py", "mbebench/published/pipeline.py")


def _strings(path) -> list[str]:
    """The string constants of a module's code (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_no_rule_or_pipeline_module_spells_a_path_of_its_own():
    spelled = [(f, s) for f in USERS for s in _strings(REPO / f) if TOP.match(s)]
    for smk in [REPO / "Snakefile", *(REPO / "workflow/rules").glob("*.smk")]:
        code = "\n".join(line.split("#")[0] for line in smk.read_text().splitlines())
        spelled += [(smk.name, s) for s in re.findall(r'"([^"]*)"', code) if TOP.match(s)]
    assert spelled == []


def test_the_templates_and_the_functions_agree():
    assert paths.row("D", "r") == paths.ROW.format(dataset="D", run_id="r")
    assert paths.row("D", "r") == "results/runs/D/r.json"
    assert paths.shard_row("D", "r", 1, 3) == "results/runs/D/r/shard-1-of-3.json"
    assert paths.job_receipt("D", "r", 0, 2) == "results/runs/D/r/job-0-of-2.json"
    assert paths.run_log("D", "r") == "logs/runs/D/r.log"
    assert paths.graph_file("D") == "results/csr/D.csr"
    assert paths.graph_file("D", "adj") == "results/graphs/D.adj"
