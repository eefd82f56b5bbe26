"""Small modules with one job each (the developers' guide; issue 20): a module outside the
tests over about 500 lines says why in its docstring ("Why one module of ...")."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMIT = 520  # "about 500"


def test_long_modules_state_why():
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    long = []
    for f in files:
        if f.startswith("tests/"):
            continue
        text = (REPO / f).read_text()
        if text.count("\n") > LIMIT:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if "Why one module of" not in doc:
                long.append(f"{f}: {text.count(chr(10))} lines")
    assert not long, long


def test_no_module_is_imported_under_a_one_or_two_capital_letter_name():
    """``SH.parse`` says less than ``sharding.parse`` (the kernel package keeps its own)."""
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.split()
    found = []
    for f in files:
        if f.startswith(("cumbe/kernel/", "benchmarks/")):
            continue
        for node in ast.walk(ast.parse((REPO / f).read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found += [f"{f}: {a.name} as {a.asname}" for a in node.names
                          if a.asname and len(a.asname) <= 2 and a.asname.isupper()]
    assert not found, found
