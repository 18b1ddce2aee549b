#!/usr/bin/env bash
# Build the separate virtualenv that holds the IFEval reference: lm-eval 0.4.13's copy of
# Google's instruction_following_eval (lm_eval/tasks/ifeval), installed with --no-deps, plus
# NLTK's punkt_tab data in the venv's own nltk_data folder (the reference's instructions_util
# would call nltk.download("punkt_tab") at import; here the data comes from PyPI instead:
# llama-index-core 0.14.25 ships NLTK's punkt_tab.zip byte for byte, checked by its sha256).
# A developer tool only: the project's scorer never downloads anything.
# Usage: scripts/ifeval_reference/make_venv.sh [VENV_DIR]   (default var/ifeval-reference-venv)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-$root/var/ifeval-reference-venv}"
python="${PYTHON:-python3.11}"
punkt_sha256="e57f64187974277726a3417ca6f181ec5403676c717672eef6a748a7b20e0106"
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    echo "make_venv.sh: need Python 3.11 (set PYTHON=/path/to/python3.11)" >&2
    exit 2
fi
"$python" -m venv "$venv"
# Every package pinned, no resolver: the same set every time.
"$venv/bin/pip" install --quiet --no-deps -r "$root/scripts/ifeval_reference/requirements.txt"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/pip" download --quiet --no-deps -d "$work" llama-index-core==0.14.25
"$venv/bin/python" - "$work" "$venv/nltk_data/tokenizers" "$punkt_sha256" <<'PY'
import hashlib, io, pathlib, sys, zipfile
work, target, expected = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
(wheel,) = work.glob("llama_index_core-*.whl")
member = "llama_index/core/_static/nltk_cache/tokenizers/punkt_tab.zip"
data = zipfile.ZipFile(wheel).read(member)
digest = hashlib.sha256(data).hexdigest()
if digest != expected:
    sys.exit(f"punkt_tab.zip sha256 {digest} is not NLTK's {expected}")
target.mkdir(parents=True, exist_ok=True)
zipfile.ZipFile(io.BytesIO(data)).extractall(target)
print("punkt_tab", digest[:12], "->", target)
PY
"$venv/bin/python" "$root/scripts/ifeval_reference/reference_verdicts.py" --self-check
