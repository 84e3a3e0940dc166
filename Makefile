# Every target bootstraps .venv itself (Python 3.11+), so a fresh clone needs nothing else.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CODEGEN := $(BIN)/mcp-codegen

.PHONY: generate fetch check lint typecheck test pytest conformance bench services clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

fetch: $(STAMP)
	$(CODEGEN) fetch

generate: fetch
	$(CODEGEN) generate

check: fetch
	$(CODEGEN) check

lint: $(STAMP)
	$(BIN)/ruff check codegen generated runtime examples tests bench
	$(BIN)/black --check --quiet codegen generated runtime examples tests bench

typecheck: $(STAMP)
	$(BIN)/pyright generated codegen runtime examples

# The Debian packages the HTTP scale-out test and benchmarks need (nginx, wrk, redis-server):
# installed when missing (as root), never started as system services.
services:
	bash scripts/ensure-services.sh

pytest: fetch services
	$(BIN)/pytest

# The official MCP conformance suite (Node 22 and the suite from tests/conformance's lock file)
# against examples/everything_server.py over HTTP, both requirement sets.
conformance: $(STAMP)
	$(BIN)/python tests/conformance/run.py

test: lint check typecheck pytest conformance

bench: fetch services
	$(BIN)/python bench/codec.py
	$(BIN)/python bench/stdio.py
	$(BIN)/python bench/http.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
