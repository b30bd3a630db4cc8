# Two commands on a fresh machine: `make demo` and `make test`.
# Every bootstrap step is idempotent and quick once done.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.plasmate_nb-installed

.PHONY: test demo lab bench lint soak browser bootstrap clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q -e '.[dev,lab]'
	touch $(STAMP)

# A Chromium must exist (PLASMATE_NB_CHROMIUM, Playwright's own, or a system one);
# otherwise install Debian's package, or Playwright's build where apt is not usable.
browser: $(STAMP)
	@$(PY) -m plasmate_nb find-browser >/dev/null 2>&1 || bash scripts/install-chromium.sh "$(PY)"
	@$(PY) -m plasmate_nb find-browser

bootstrap: browser

# Style, formatting, types and the layer contracts. Every step runs, so one report shows all
# of them; the target fails if any failed.
lint: $(STAMP)
	@status=0; \
	$(VENV)/bin/ruff check . || status=1; \
	$(VENV)/bin/ruff format --check --output-format concise . || status=1; \
	$(VENV)/bin/mypy plasmate_nb || status=1; \
	$(VENV)/bin/lint-imports --no-logo || status=1; \
	exit $$status

test: bootstrap lint
	$(PY) -m pytest -q --durations=25

# Long by design: no per-test or whole-run time limits.
soak: bootstrap
	$(PY) -m pytest -q -m soak --timeout=0 -o session_timeout= tests/reliability tests/som

demo: bootstrap
	$(PY) -m plasmate_nb demo

bench: bootstrap
	$(PY) benchmarks/run_all.py

# etc/jupyter turns JupyterLab's widget state saving on: a saved notebook reopens showing its
# dashboards' last state (otherwise: "Error displaying widget: model not found").
lab: bootstrap
	JUPYTER_CONFIG_PATH=$(CURDIR)/etc/jupyter $(VENV)/bin/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root,)

clean:
	rm -rf $(VENV) build *.egg-info benchmarks/results .mypy_cache .import_linter_cache
