# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
export PATH := $(BIN):$(PATH)

# The FinOps Foundation's FOCUS validator (tests check the FOCUS export with it) needs Python 3.12, so it
# gets its own virtualenv inside .venv; the stamp names the version, so changing it reinstalls.
FOCUS_VALIDATOR_PYTHON ?= python3.12
FOCUS_VALIDATOR_PYENV_VERSION ?= 3.12.1
FOCUS_VALIDATOR_VERSION := 2.2.1
FOCUS_VALIDATOR_VENV := $(VENV)/focus-validator
FOCUS_VALIDATOR_STAMP := $(FOCUS_VALIDATOR_VENV)/.installed-$(FOCUS_VALIDATOR_VERSION)
export FOCUS_VALIDATOR_VENV := $(abspath $(FOCUS_VALIDATOR_VENV))

# The browser tests (report and docs site) drive Debian's chromium through playwright; CI machines may lack it.
CHROMIUM ?= /usr/bin/chromium

.PHONY: install demo test test-slow test-all test-spark test-setup lint format ui dev serve clean chromium bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,spark]'
	touch $(STAMP)

$(FOCUS_VALIDATOR_STAMP): | $(BIN)/python
	PYENV_VERSION=$(FOCUS_VALIDATOR_PYENV_VERSION) $(FOCUS_VALIDATOR_PYTHON) -m venv $(FOCUS_VALIDATOR_VENV)
	$(FOCUS_VALIDATOR_VENV)/bin/python -m pip install --quiet focus-validator==$(FOCUS_VALIDATOR_VERSION) 'pyarrow<18'
	touch $(FOCUS_VALIDATOR_STAMP)

install: $(STAMP) $(FOCUS_VALIDATOR_STAMP)

demo: install  ## generate sample data, materialize everything, build docs, print a summary
	$(BIN)/gpu-finops demo

chromium:  ## install Debian's chromium for the headless-browser tests when it is missing (needs root)
	@test -x $(CHROMIUM) || (apt-get update && apt-get install -y --no-install-recommends chromium)

# The test tiers (docs/development.md "Tests"): `make test` is the fast feedback loop and skips the tests marked `slow` (the demo
# organisation, the kill-at-every-phase chain, the benchmark smoke run); `make test-slow` runs only those; `make
# test-all` runs every test in one session (what CI runs): the two workers balance the few long slow tests against
# the many fast ones, which two sessions one after the other cannot (the slow session alone took 34 min, busy machine).
PYTEST := $(BIN)/pytest -n 2 --dist loadfile --durations=40

test: test-setup  ## lint, then every test but the slow and Spark ones (dbt builds on fixture data included), two workers
	$(PYTEST) -m "not slow and not spark"

test-slow: test-setup  ## only the tests marked slow (the Spark demo's included)
	$(PYTEST) -m slow

test-all: test-setup  ## lint, then every test, slow ones included, in one session, Spark's apart (CI)
	$(PYTEST) -m "not spark"

# The Spark tests start one standalone cluster (a master and a worker JVM) for the whole module and run the demo on
# it: one worker process, so no second JVM competes for the two cores.
test-spark: test-setup  ## the dbt project on a local Spark cluster, compared with the DuckDB build of the same lake
	$(BIN)/pytest -m spark -p no:xdist --durations=10

test-setup: install chromium
	$(BIN)/ruff check .
	# Parse the dbt project once up front (dagster-dbt's preparer, under its lock) when a project file changed.
	$(BIN)/python -m pipelines.lib.transform.dbt

# Benchmark (docs/benchmarks.md): DuckDB's own load of N CUR 2.0 line items vs the project's ingest, dbt build and
# daily incremental run, for 1M, 10M and 30M rows. About 16 minutes on 2 cores once the data exist (generating them
# the first time adds about 5, mostly the 30M); e.g. BENCH_ARGS="--rows 1000000".
ENGINE ?= duckdb
bench: install  ## ENGINE=spark: the same runs with dbt on Spark (local[2]); results beside DuckDB's
	$(BIN)/python -m bench.run --engine $(ENGINE) $(BENCH_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Both Dagster targets first install the instance's dagster.yaml into FINOPS_HOME/dagster (SQLite storage, or
# PostgreSQL when DAGSTER_PG_HOST is set: pipelines/lib/operations/instance.py) and parse the dbt project if it
# changed (the definitions read the manifest). Dagster needs DAGSTER_HOME absolute.
DAGSTER_ENV := export FINOPS_HOME=$$(realpath -m $${FINOPS_HOME:-$(CURDIR)/data}); export DAGSTER_HOME=$$FINOPS_HOME/dagster; \
	$(BIN)/python -m pipelines.lib.operations.instance && $(BIN)/python -m pipelines.lib.transform.dbt

ui: install  ## the Dagster UI (and its schedule and sensor daemon) on http://localhost:3000, for development
	@$(DAGSTER_ENV) && exec $(BIN)/dagster dev -h $${DAGSTER_UI_HOST:-127.0.0.1} -p $${DAGSTER_UI_PORT:-3000}

dev: ui

# Production (docs/operations.md "Running it every day in production"): the daemon, which fires schedules and sensors and starts
# queued runs, and the webserver, as two processes on one instance; stopping the webserver (Ctrl-C, SIGTERM) stops
# the daemon too. A service manager runs them as two units instead (docs/operations.md).
serve: install  ## production: dagster-daemon and dagster-webserver on FINOPS_HOME's instance (DAGSTER_UI_HOST/PORT)
	@$(DAGSTER_ENV) && { $(BIN)/dagster-daemon run & daemon=$$!; \
		trap 'kill $$daemon 2>/dev/null; wait $$daemon' EXIT INT TERM; \
		$(BIN)/dagster-webserver -h $${DAGSTER_UI_HOST:-127.0.0.1} -p $${DAGSTER_UI_PORT:-3000}; }

clean:
	rm -rf data dbt_project/target dbt_project/logs .pytest_cache .ruff_cache
