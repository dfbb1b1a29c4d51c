# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)

.PHONY: install demo test lint format dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install  ## generate sample data, materialize everything, build docs, print a summary
	$(BIN)/gpu-finops demo

test: install  ## lint, then every test (including a dbt build on fixture data)
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

dev: install  ## the Dagster UI on http://localhost:3000
	FINOPS_HOME=$${FINOPS_HOME:-$(CURDIR)/data} DAGSTER_HOME=$${FINOPS_HOME:-$(CURDIR)/data}/dagster \
		$(BIN)/dagster dev -m pipelines.definitions

clean:
	rm -rf data dbt_project/target dbt_project/logs .pytest_cache .ruff_cache
