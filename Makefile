# Two entry points on a fresh machine: `make demo` and `make test`.
# Set-up steps print one line each; their full output goes to build/logs/ (named on failure).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# `make demo` installs only what running a notebook needs (the demo extra); `make test` adds the
# dev and test tools to the same environment.
DEMO_STAMP := $(VENV)/.demo-stamp
STAMP := $(VENV)/.installed-stamp
EXTRAS := demo,dev,test,docs,apis,dask
LOGS := build/logs
STEP := scripts/step

# The oldest Playwright we support: the one the optional camoufox extra pins. The second run takes
# what can differ between Playwright versions: the test files marked playwright_sensitive, those
# whose subject is a module that calls Playwright (snapshots, actions, frames, downloads, routing,
# CDP sessions, tracing, remote connect, the driver and crashes; tests/test_compat_scope.py holds
# the list and checks it against the imports), and the camoufox checks. The rest (envelopes,
# grants, MCP transports, kernels, notebooks) reaches Playwright only through those modules.
COMPAT_VENV ?= .venv-playwright-1.62
COMPAT_PLAYWRIGHT ?= 1.62.0

.PHONY: install chromium demo test test-fast test-compat lint docs bench generate app clean

# The environment, made once whichever of the two stamps below comes first, with uv in it:
# uv installs the same packages pip would, from PyPI, in a third of the time (downloads in
# parallel, no bytecode compiled up front), which is most of a fresh CI run's set-up.
UV := $(VENV)/bin/uv
NEW_VENV := [ -x $(UV) ] || { $(STEP) "Creating the environment in $(VENV)" $(LOGS)/venv.log $(PYTHON) -m venv $(VENV) \
	&& $(STEP) "Installing uv" $(LOGS)/uv.log $(PY) -m pip install uv; }
INSTALL = $(UV) pip install --python

$(DEMO_STAMP): pyproject.toml
	@$(NEW_VENV)
	@$(STEP) "Installing webmcp_nb with its demo extra" $(LOGS)/install-demo.log $(INSTALL) $(PY) -e '.[demo]'
	@touch $(DEMO_STAMP)

# On a fresh checkout `make test` installs every extra in one pip run (the demo extra is one of
# them), not the demo extra first and the rest after it; the demo's stamp is then up to date too.
$(STAMP): pyproject.toml
	@$(NEW_VENV)
	@$(STEP) "Installing webmcp_nb with its $(EXTRAS) extras" $(LOGS)/install.log \
		$(INSTALL) $(PY) -e '.[$(EXTRAS)]'
	@touch $(DEMO_STAMP) $(STAMP)

install: $(STAMP)

chromium: $(DEMO_STAMP)
	@$(PY) scripts/ensure_chromium.py --log $(LOGS)/chromium.log

demo: $(DEMO_STAMP) chromium
	@$(PY) scripts/run_notebook.py notebooks/01-quickstart.ipynb --out build

# pytest exits 5 when it collected no tests; that proves nothing, so it fails the target.
# Tests run on two workers per core (pytest-xdist), each test file on one worker, so a module's
# shared browser session starts once. Two per core because the tests wait more than they compute
# (browsers' frame clocks, kernels and servers starting): with one per core half the CPU sat idle.
# PYTEST_WORKERS=0 runs them in this process.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
define run_pytest
	$(1) -m pytest -p no:cacheprovider -n $(PYTEST_WORKERS) --dist loadfile $(2) $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status
endef

test: install chromium
	@$(call run_pytest,$(PY))

# The tests that need no browser, in seconds. No Chromium can be found, so a test that
# launches one without the `browser` marker fails here instead of passing slowly.
test-fast: install
	@WEBMCP_NB_CHROMIUM=/nonexistent/chromium-for-test-fast $(call run_pytest,$(PY),-m "not browser")

test-compat: chromium
	@$(STEP) "Creating the environment in $(COMPAT_VENV)" $(LOGS)/compat-venv.log $(PYTHON) -m venv $(COMPAT_VENV)
	@$(STEP) "Installing webmcp_nb with Playwright $(COMPAT_PLAYWRIGHT) and the camoufox, dask and apis extras (every test module is collected; the API page transport is Playwright-sensitive)" $(LOGS)/compat-install.log \
		$(INSTALL) $(COMPAT_VENV)/bin/python -e '.[test,demo,camoufox,dask,apis]' 'playwright==$(COMPAT_PLAYWRIGHT)'
	@WEBMCP_NB_REQUIRE_CAMOUFOX=1 $(call run_pytest,$(COMPAT_VENV)/bin/python,-m "playwright_sensitive or camoufox")

# ruff (rules in pyproject.toml), the formatter's check, and mypy (strict) on the whole package.
lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

bench: install chromium
	$(PY) bench/bench_core.py --write BENCHMARKS.md
	$(PY) bench/bench_notebook.py --write BENCHMARKS.md
	$(PY) bench/bench_webmcp.py --write BENCHMARKS.md
	$(PY) bench/bench_execute.py --write BENCHMARKS.md
	$(PY) bench/bench_mcp.py --write BENCHMARKS.md
	$(PY) bench/bench_tool_list.py --write BENCHMARKS.md
	$(PY) bench/bench_results.py --write BENCHMARKS.md
	$(PY) bench/bench_evidence.py --write BENCHMARKS.md
	$(PY) bench/bench_instances.py --write BENCHMARKS.md
	$(PY) bench/bench_remote.py --write BENCHMARKS.md
	$(PY) bench/bench_pages.py --write BENCHMARKS.md
	$(PY) bench/bench_dask.py --write BENCHMARKS.md

# The typed Session methods (webmcp_nb/_generated.py) from the tool registry; run after adding
# or changing a tool, and commit the result (tests/test_api.py fails while it is stale).
generate: install
	$(PY) scripts/generate_api.py
	$(PY) scripts/generate_options.py
	$(PY) scripts/generate_docs.py

# The MCP App (webmcp_nb/mcp/static/live.html, committed so installing the package needs no Node):
# app/src bundled with the MCP Apps SDK from app/'s locked npm packages. tests/test_mcp_app.py fails
# when the committed file is not what the sources build to.
app:
	@$(STEP) "Installing the MCP App's npm packages" $(LOGS)/app-npm.log npm ci --prefix app --no-audit --no-fund
	node app/build.mjs

# The documentation site (build/site/), strict: a broken link or anchor, or a page left out of the
# navigation, fails the build. The generated pages are checked for staleness by the tests.
docs: install
	@NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) $(COMPAT_VENV) build .pytest_cache .mypy_cache .ruff_cache
