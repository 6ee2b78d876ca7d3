# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create the virtual environment in .venv on first use (Python 3.11+).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test dev clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/verdicts demo

test: $(STAMP)
	$(BIN)/python -m pytest

dev: $(STAMP)
	mkdir -p var/dagster_home && cp -n orchestration/dagster_local.yaml var/dagster_home/dagster.yaml || true
	DAGSTER_HOME=$(CURDIR)/var/dagster_home $(BIN)/dagster dev

clean:
	rm -rf var
