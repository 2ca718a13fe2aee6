# The two commands a new user needs: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck imports docs pytest bench clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "trainplate needs Python 3.11 or newer (found: $$($(PYTHON) --version))"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall whenever the dependency list changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[embedded,dev,torch]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/trainplate dev

test: lint typecheck imports docs pytest

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
pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m bench.append
	$(BIN)/python -m bench.relay
	$(BIN)/python -m bench.template_create

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache *.egg-info site
