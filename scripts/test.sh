#!/usr/bin/env bash
# The project's test command (README, .ci/run): lint, then the pytest suite.
# Arguments go to pytest, e.g. scripts/test.sh tests/test_passes.py -x
# Needs the venv of the README's second command: python3 -m venv .venv &&
# .venv/bin/pip install '.[test]'
set -euo pipefail
cd "$(dirname "$0")/.."

# tools the test extra installs into the venv (lit, filecheck, spirv-val if
# pip brought it) are found before the system's
export PATH="$PWD/.venv/bin:$PATH"

echo "+ ruff check ."
.venv/bin/python -m ruff check .
echo "+ pytest $*"
.venv/bin/python -m pytest "$@"
