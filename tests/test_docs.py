"""The documentation and benchmarks/ as a user meets them: a short README, links that lead
somewhere, a configuration page that matches the schema, commands that run on the user's
own machine, and a benchmarks/ folder that stays a small part of the repository."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "benchmarks").rglob("*.md"))]
# Instructions for one particular remote-GPU setup, not for a user's machine
HARNESS = re.compile(r"\$OUT\b|\bOUT=|this workplace|warm machine|device call|RESUME=1|"
                     r"\.whl\b|\.devrun|\bcarry:|carry \[")
LINK = re.compile(r"\]\(([^)#\s]+)")


def _gen_config_docs():
    spec = importlib.util.spec_from_file_location(
        "gen_config_docs", REPO / "tools" / "gen_config_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _harness_words(text: str) -> list[str]:
    return HARNESS.findall(text)


def test_the_readme_is_short():
    assert len((REPO / "README.md").read_text().splitlines()) <= 120


def test_the_configuration_page_is_what_the_tool_writes():
    committed = (REPO / "docs" / "configuration.md").read_text()
    assert committed == _gen_config_docs().render(), "run python tools/gen_config_docs.py"


def test_the_configuration_page_names_every_engine_parameter():
    from mbebench import engine

    page = (REPO / "docs" / "configuration.md").read_text()
    for name in engine.ENGINES:
        for param in engine.get_spec(name).params:
            assert f"`engines.{name}.{param.name}`" in page


def test_links_lead_to_files_that_exist():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if not target.startswith(("http://", "https://", "mailto:")) and \
                    not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(REPO)}: {target}")
    assert broken == []


def test_no_instructions_for_a_remote_harness():
    files = [*DOCS, *(REPO / "benchmarks").rglob("*.py"), *(REPO / "benchmarks").rglob("*.sh"),
             *(REPO / "benchmarks").rglob("*.yaml"), *(REPO / "tools").glob("*.py"),
             *(REPO / "benchmarks").rglob("*.json"), *(REPO / "benchmarks").rglob("*.jsonl")]
    found = {str(p.relative_to(REPO)): _harness_words(p.read_text()) for p in files}
    assert {k: v for k, v in found.items() if v} == {}


@pytest.mark.parametrize("line", [
    "    run: command \"OUT=$OUT bash run.sh\"",
    "carry [\".whl\", \".mirror\"]",
    "Call it again with RESUME=1 while the machine is still warm",
    "## Device recipe (this workplace)",
])
def test_the_harness_check_sees_such_instructions(line):
    assert _harness_words(line)


def _tracked(*paths: str) -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=REPO,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = [REPO / p for p in out.decode().split("\0") if p]
    if not files:
        pytest.skip("not a git checkout")
    return [p for p in files if p.is_file()]


def _lines(files: list[Path]) -> int:
    """Lines of the text files (a PDF's or an image's newline bytes are not lines; their
    bytes count in the size limit)."""
    return sum(b.count(b"\n") for b in (p.read_bytes() for p in files) if b"\0" not in b)


def test_benchmarks_stay_a_small_part_of_the_repository():
    """At most 2 MB and 20 % of the lines: current figures, their rows and commands; the
    history lives in git."""
    bench = _tracked("benchmarks")
    assert sum(p.stat().st_size for p in bench) <= 2_000_000
    assert _lines(bench) <= 0.20 * _lines(_tracked("."))
