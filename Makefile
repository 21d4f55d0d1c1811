# ssa_course: two commands matter.
#   make lab   -- set everything up, then open JupyterLab on the tour
#   make test  -- set everything up, then run the whole test suite
# Others: make exercises (regenerate exercises/ from solutions/), make bench, make lint,
#         make clean (caches), make distclean (caches and the virtual environment),
#         make fuzz N=10000 [SEED=0] [JOBS=2] (generated programs through every stage;
#         shrunk mismatches go to out/fuzz/).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_ARGS ?=
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

.PHONY: browser-test lab test venv graphviz exercises bench clean distclean lint fuzz

# Re-install only when pyproject.toml is newer than the stamp (or there is no venv yet).
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { \
	  echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu install python3-venv"; \
	  exit 1; }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

graphviz:
	@if command -v dot >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Graphviz (apt-get install graphviz)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends graphviz >/dev/null) \
	  || echo "note: could not install Graphviz; drawings fall back to matplotlib"; \
	else \
	  echo "note: Graphviz 'dot' not found; install it (e.g. 'sudo apt-get install graphviz' or 'brew install graphviz') for the best drawings"; \
	fi

lab: venv graphviz
	$(VENV)/bin/jupyter lab notebooks/00-tour.ipynb --ServerApp.root_dir="$(CURDIR)" $(LAB_ARGS)

test: venv graphviz
	$(VENV)/bin/ruff check ssa_course tests benchmarks tools
	$(PY) -m pytest

lint: venv
	$(VENV)/bin/ruff check ssa_course tests benchmarks tools

exercises: venv
	$(PY) tools/make_exercises.py

# Drive the tour's explore() panel in headless Chromium (Debian's chromium + playwright,
# no browser download). Not part of `make test`: it needs a browser on the machine.
browser-test: venv graphviz
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else echo "note: install Chromium (e.g. 'sudo apt-get install chromium') first"; exit 1; fi; \
	fi
	$(PY) -m pip install --quiet playwright
	$(PY) tools/browser_check.py

N ?= 1000
SEED ?= 0
JOBS ?= 2
fuzz: venv
	$(PY) tools/fuzz.py -n $(N) --seed $(SEED) --jobs $(JOBS)

bench: venv
	$(PY) benchmarks/run_all.py

clean:
	rm -rf .pytest_cache .ruff_cache .hypothesis build *.egg-info
	find ssa_course tests tools benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
