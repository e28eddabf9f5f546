# Two entry points (see README): `make test` and `make css-demo`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup test bench lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Editable install of the package with its test tools.
setup: $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"

# The offline test suite (mock models only; no network).
test: setup
	$(BIN)/python -m pytest -q

# Model calls per tuple vs the floor and the naive pipeline.
bench: setup
	$(BIN)/python bench/css_calls.py

# Re-register the CSS catalog after a deliberate edit.
lock: setup
	$(BIN)/clinical-cf catalog lock catalog/css/interventions.yaml
