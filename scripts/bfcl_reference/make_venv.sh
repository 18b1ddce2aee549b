#!/usr/bin/env bash
# Build the separate virtualenv that holds BFCL's official checker (bfcl-eval 2026.3.23).
# bfcl-eval pins numpy 1.26, so it never goes into the project venv.
# Usage: scripts/bfcl_reference/make_venv.sh [VENV_DIR]   (default var/bfcl-reference-venv)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-$root/var/bfcl-reference-venv}"
python="${PYTHON:-python3.11}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "make_venv.sh: need Python 3.11 (set PYTHON=/path/to/python3.11)" >&2
    exit 2
fi
"$python" -m venv "$venv"
# Every package pinned, no resolver: the same set every time.
"$venv/bin/pip" install --quiet --no-deps -r "$root/scripts/bfcl_reference/requirements.txt"
"$venv/bin/python" -c '
import importlib.metadata as m
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: F401
assert m.version("bfcl_eval") == "2026.3.23", m.version("bfcl_eval")
print("bfcl-eval", m.version("bfcl_eval"), "ready")
'
