# The commands a new user needs: `make run`, `make test` and, while editing, `make quick`.
# Everything else is a helper.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test quick lint typecheck imports docs pytest pytest-spread pytest-processes unit bench
.PHONY: clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "trainplate needs Python 3.11 or newer (found: $$($(PYTHON) --version))"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[embedded,dev,torch,otlp]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/trainplate dev

# xdist processes for the tests that start no process of their own; 0 (the default): they run
# in one pytest process beside the one of those that do (docs/decisions/0008-parallel-tests.md).
PYTEST_WORKERS ?= 0

# Everything CI checks (.ci/run): the static checks run beside pytest, and -O prints each one's
# output in one piece when it ends, so a failure is never interleaved with another's.
test: $(STAMP)
	@$(MAKE) --no-print-directory -j -O lint typecheck imports docs pytest

# The loop while editing: the static checks and every test that needs no server, in seconds
# (mypy reads .mypy_cache, so its first run is the slow one).
quick: $(STAMP)
	@$(MAKE) --no-print-directory -j -O lint typecheck imports unit

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

imports: $(STAMP)
	$(BIN)/lint-imports

# The docs site (mkdocs.yml) into site/: --strict fails on a broken link or an unlisted page.
# Not --quiet: it hides the warnings --strict counts, and the build then passes.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# pytest exits 5 when it collects nothing; that is a failure here, as any other non-zero code.
# Two runs side by side (make -j): the tests that start whole processes (`slow`, `fuzz`) one at
# a time, as their readiness waits expect; the rest beside them, over PYTEST_WORKERS processes
# if set. A server given in TEST_DATABASE_URL or TEST_NATS_URL serves one pytest: one run.
ifneq ($(TEST_DATABASE_URL)$(TEST_NATS_URL),)
pytest: $(STAMP)
	$(BIN)/pytest
else
pytest: pytest-spread pytest-processes
endif

pytest-spread: $(STAMP)
	$(BIN)/pytest $(if $(filter-out 0,$(PYTEST_WORKERS)),-n $(PYTEST_WORKERS)) -m 'not slow and not fuzz'

pytest-processes: $(STAMP)
	$(BIN)/pytest -m 'slow or fuzz'

# Tests marked neither `integration` nor `slow` need no server and no process of their own
# (tests/conftest.py fails a test that asks for a server without the mark).
unit: $(STAMP)
	$(BIN)/pytest -q -m 'not integration and not slow' tests/unit tests/contract

bench: $(STAMP)
	$(BIN)/python -m bench.append
	$(BIN)/python -m bench.relay
	$(BIN)/python -m bench.template_create

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info site
