# Every target bootstraps .venv itself (Python 3.11+), so a fresh clone needs nothing else.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CODEGEN := $(BIN)/mcp-codegen

.PHONY: generate fetch check lint typecheck test test-fast pytest conformance conformance-proxy conformance-same-era bench services wheel clean help

# The types distribution first (packaging/mcp-wire): mcpgen requires it, and it is on no index.
$(STAMP): pyproject.toml packaging/mcp-wire/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e packaging/mcp-wire
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

# Every test but those marked slow, peers or services (pyproject's markers): no nginx, Redis,
# node or official SDK; about 6.5 minutes on 2 cores. `make test` still runs everything.
test-fast: fetch
	$(BIN)/pytest -q -m "not slow and not peers and not services"

# The official MCP conformance suite (Node 22 and the suite from tests/conformance's lock file)
# against examples/everything_server.py over HTTP, both requirement sets.
# Also every Skills (SEP-2640) scenario of the suite, server and client, at both eras.
conformance: $(STAMP)
	$(BIN)/python tests/conformance/run.py

# The server leg again through `mcpio proxy` (issue 36), the fixture server behind it in the other
# era (a revision bridge each way); not part of `make test` (about as long as the server leg).
conformance-proxy: $(STAMP)
	$(BIN)/python tests/conformance/run.py --proxy
	$(BIN)/python tests/conformance/run.py --client-proxy

# The server leg through `mcpio proxy` to a target of the same era (nothing excused): about 1 min
conformance-same-era: $(STAMP)
	$(BIN)/python tests/conformance/run.py --proxy-same-era

# Two lanes at once (scripts/test-lanes.sh): pytest but the differential suites, and beside it
# lint, typecheck, check, the differential suites and both conformance runs (shown after).
test: fetch services
	bash scripts/test-lanes.sh

bench: fetch services
	$(BIN)/python bench/codec.py
	$(BIN)/python bench/dispatch.py
	$(BIN)/python bench/middleware.py
	$(BIN)/python bench/stdio.py
	$(BIN)/python bench/http.py
	$(BIN)/python bench/proxy.py
	$(BIN)/python bench/http_client.py
	$(BIN)/python bench/bus.py
	$(BIN)/python bench/inspector.py
	$(BIN)/python bench/tasks_store.py
	$(BIN)/python bench/tasks.py
	$(BIN)/python bench/task_workers.py
	$(BIN)/python bench/task_workers_http.py

# The documentation site (issue 40): the `docs` extra installed into .venv, then a strict build
# into site/ (broken links or anchors, missing references, any warning fail it).
.PHONY: docs docs-serve api-surface
DOCS_STAMP := $(VENV)/.docs-installed
$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# Serves the site with live reload on http://127.0.0.1:8008 (DOCS_PORT to change).
DOCS_PORT ?= 8008
docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict -a 127.0.0.1:$(DOCS_PORT)

# Rewrites api-surface.txt, the public names and signatures tests/test_api_surface.py compares
# against: run it when a public API change is meant, and commit the file with the change.
api-surface: $(STAMP)
	$(BIN)/python scripts/api_surface.py --write

# The wheels other projects install: mcp-wire (the generated types and their small runtime) and
# mcpgen (mcpio, requiring the first); the generator stays in the checkout.
wheel: $(STAMP)
	rm -f dist/mcpgen-*.whl dist/mcp_wire-*.whl
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist packaging/mcp-wire .
	@ls dist/mcp_wire-*.whl dist/mcpgen-*.whl

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis

help:
	@echo "make generate     fetch the pinned schemas (sha256-checked), regenerate generated/mcp_wire"
	@echo "make fetch        fetch the pinned schemas into schema/<rev>/schema.json"
	@echo "make check        fail if generated/ differs from what generate would write"
	@echo "make lint         ruff and black, check only"
	@echo "make typecheck    pyright on generated/, codegen/, runtime/, examples/"
	@echo "make services     the Debian packages the HTTP scale-out test and benchmarks need"
	@echo "make pytest       every test"
	@echo "make test-fast    pytest -m \"not slow and not peers and not services\" (about 6.5 min on 2 cores)"
	@echo "make conformance  the official MCP conformance suite against examples/everything_server.py"
	@echo "make conformance-proxy  the conformance server leg through mcpio proxy, across eras"
	@echo "make conformance-same-era  the server leg through mcpio proxy, each era to its own (in make test)"
	@echo "make test         pytest, beside it lint, check, typecheck, conformance (29-33 min on 2 cores)"
	@echo "make bench        codec, stdio and HTTP benchmarks against the official packages; bus, task stores"
	@echo "make wheel        dist/: mcp_wire-<version>-py3-none-any.whl (the types) and mcpgen-<version>-... (mcpio)"
	@echo "make docs         build the documentation site into site/, strictly (the docs extra first)"
	@echo "make docs-serve   serve the documentation site on http://127.0.0.1:8008 while editing it"
	@echo "make api-surface  rewrite api-surface.txt (the public API the tests compare against)"
	@echo "make clean        remove .venv and the caches"
	@echo "Each target but help and clean bootstraps .venv (Python 3.11+) first."
