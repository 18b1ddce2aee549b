#!/usr/bin/env bash
# The HAT study (docs/RESULTS.md) in the background: migrate, seed the demo users, then
# `manage.py hat_study` with its log under var/hat_study/<scale>/. Run it again to resume
# after an interruption (every stage is checkpointed; finished runs are not redone).
#   scripts/hat_study.sh [cpu|full|smoke]      (default cpu; DATABASE_URL as for make run)
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE="${1:-cpu}"
OUT="var/hat_study/${SCALE}"
mkdir -p "${OUT}"
export HF_HUB_OFFLINE=1
.venv/bin/python manage.py migrate --noinput >/dev/null
.venv/bin/python manage.py seed_demo --no-experiment >/dev/null
nohup .venv/bin/python manage.py hat_study --scale "${SCALE}" >>"${OUT}/study.log" 2>&1 &
echo "HAT study (${SCALE}) started, pid $!; follow it with: tail -f ${OUT}/study.log"
