# Two entry points on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install chromium demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

chromium: $(STAMP)
	$(PY) scripts/ensure_chromium.py

demo: install chromium
	$(PY) -m webmcp_nb.demo.quickstart

test: install chromium
	$(PY) -m pytest $(PYTEST_ARGS)

bench: install chromium
	$(PY) bench/bench_core.py --write BENCHMARKS.md

clean:
	rm -rf $(VENV) build .pytest_cache
