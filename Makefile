# Two entry points for a fresh machine: `make demo` and `make test`.
# Both create the virtual environment in .venv on first use (Python 3.11+), installing the
# exact versions pinned in requirements.lock; `make lock` refreshes it from pyproject.toml.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCK := requirements.lock

.PHONY: install demo test dev lock clean

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) tools/lock.py --check
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c $(LOCK) -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/verdicts demo

test: $(STAMP)
	$(BIN)/python -m pytest

dev: $(STAMP)
	mkdir -p var/dagster_home && cp -n orchestration/dagster_local.yaml var/dagster_home/dagster.yaml || true
	DAGSTER_HOME=$(CURDIR)/var/dagster_home $(BIN)/dagster dev

# After changing dependencies in pyproject.toml: resolve the lock again (pins that still fit are kept;
# `$(BIN)/python tools/lock.py --upgrade` moves every pin to the newest allowed), then commit it.
# Needs no up-to-date install: only uv, at the version the `tools` extra pins.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet "$$($(PYTHON) tools/lock.py --tool)"
	$(BIN)/python tools/lock.py

clean:
	rm -rf var
