#!/usr/bin/env bash
# Installs pdflatex (texlive-latex-base, about 100 MB) for tests/test_tables.py::test_tex_compiles:
# the speedup table's .tex must compile.  Debian/Ubuntu, as root (or with sudo); a no-op when
# pdflatex is there.  Where it cannot install, the test skips, which .ci/run turns into a
# failure (MBEBENCH_REQUIRE=latex).
set -euo pipefail

command -v pdflatex >/dev/null && exit 0
SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
fi
if ! command -v apt-get >/dev/null || { [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; }; then
    echo "install-latex.sh: no apt-get or no root here; the LaTeX test will skip" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends texlive-latex-base >/dev/null
