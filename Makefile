# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

# The oldest Playwright we support: the one the optional camoufox extra pins.
COMPAT_VENV ?= .venv-playwright-1.62
COMPAT_PLAYWRIGHT ?= 1.62.0

.PHONY: install chromium demo test test-compat bench generate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,notebook,mcp]'
	touch $(STAMP)

install: $(STAMP)

chromium: $(STAMP)
	$(PY) scripts/ensure_chromium.py

demo: install chromium
	$(PY) scripts/run_notebook.py notebooks/01-quickstart.ipynb --out build

# pytest exits 5 when it collected no tests; that proves nothing, so it fails the target.
define run_pytest
	$(1) -m pytest -p no:cacheprovider $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status
endef

test: install chromium
	$(call run_pytest,$(PY))

test-compat: chromium
	$(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(COMPAT_VENV)/bin/python -m pip install --quiet -e '.[test,notebook,mcp]' 'playwright==$(COMPAT_PLAYWRIGHT)'
	$(call run_pytest,$(COMPAT_VENV)/bin/python)

bench: install chromium
	$(PY) bench/bench_core.py --write BENCHMARKS.md
	$(PY) bench/bench_notebook.py --write BENCHMARKS.md
	$(PY) bench/bench_webmcp.py --write BENCHMARKS.md
	$(PY) bench/bench_execute.py --write BENCHMARKS.md
	$(PY) bench/bench_mcp.py --write BENCHMARKS.md
	$(PY) bench/bench_results.py --write BENCHMARKS.md

# The typed Session methods (webmcp_nb/_generated.py) from the tool registry; run after adding
# or changing a tool, and commit the result (tests/test_api.py fails while it is stale).
generate: install
	$(PY) scripts/generate_api.py

clean:
	rm -rf $(VENV) $(COMPAT_VENV) build .pytest_cache
