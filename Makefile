# ssa_course: two commands matter.
#   make lab   -- set everything up, then open JupyterLab on the tour
#   make test  -- set everything up, then run the whole test suite
# Others: make exercises (regenerate exercises/ from solutions/), make bench, make lint,
#         make bench-native (our native code vs gcc on the kernels of benchmarks/native/),
#         make bench-asm (GNU as vs keystone vs our own assembler on those kernels),
#         make course (an nbgrader course directory in out/course, see docs/instructors.md),
#         make fuzz N=10000 [SEED=0] [JOBS=2] (generated programs through every stage;
#         shrunk mismatches go to out/fuzz/), make bril-conformance BRIL=<bril checkout>,
#         make lite (the course as a static JupyterLite site in out/lite, docs/lite.md),
#         make lite-test (that site in headless Chromium, offline: every lesson, an exercise),
#         make clean (caches), make distclean (caches and the virtual environment).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_ARGS ?=
COURSE_ARGS ?=
# Jupyter refuses to start as root unless told to (containers and fresh cloud machines
# often log in as root); USER_ID can be overridden to check both cases with `make -n lab`.
USER_ID ?= $(shell id -u)
ROOT_FLAG := $(if $(filter 0,$(USER_ID)),--allow-root,)
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

.PHONY: lite lite-test browser-test lab test venv graphviz binutils exercises course bench clean distclean lint fuzz \
	bril-conformance

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

# GNU as + ld assemble and link the native code of lesson 11 (keystone, a Python package,
# stands in when they are missing).
binutils:
	@if command -v as >/dev/null 2>&1 && command -v ld >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing GNU binutils (apt-get install binutils)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends binutils >/dev/null) \
	  || echo "note: could not install binutils; native code is assembled by keystone instead"; \
	else \
	  echo "note: GNU 'as'/'ld' not found; install binutils (e.g. 'sudo apt-get install binutils') for the primary assembler (keystone is used meanwhile)"; \
	fi

lab: venv graphviz binutils
	$(VENV)/bin/jupyter lab notebooks/00-tour.ipynb --ServerApp.root_dir="$(CURDIR)" $(ROOT_FLAG) $(LAB_ARGS)

test: venv graphviz binutils
	$(VENV)/bin/ruff check ssa_course tests benchmarks tools
	$(PY) -m pytest

lint: venv
	$(VENV)/bin/ruff check ssa_course tests benchmarks tools

exercises: venv
	$(PY) tools/make_exercises.py

# A ready nbgrader course directory (out/course) from solutions/; docs/instructors.md.
course: venv
	$(PY) tools/make_course.py $(COURSE_ARGS)

# Drive the tour's explore() panel in headless Chromium (Debian's chromium + playwright,
# no browser download). Not part of `make test`: it needs a browser on the machine.
browser-test: venv graphviz binutils
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else echo "note: install Chromium (e.g. 'sudo apt-get install chromium') first"; exit 1; fi; \
	fi
	$(PY) -m pip install --quiet playwright
	$(PY) tools/browser_check.py

# The course in the browser (docs/lite.md). Not part of `make test`: building downloads
# Pyodide and Graphviz-as-WebAssembly from npm and pure wheels from the package index.
lite: venv
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends npm >/dev/null; \
	  else echo "error: npm is needed (e.g. 'sudo apt-get install npm')"; exit 1; fi; }
	$(PY) -m pip install --quiet -e '.[lite]'
	$(PY) tools/build_lite.py

# Serve out/lite on 127.0.0.1 and run it in headless Chromium with every other host
# unresolvable; screenshots and timings in out/lite-shots/.
lite-test: venv
	@test -f out/lite/jupyter-lite.json || { echo "error: run 'make lite' first"; exit 2; }
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else echo "note: install Chromium (e.g. 'sudo apt-get install chromium') first"; exit 1; fi; \
	fi
	$(PY) -m pip install --quiet -e '.[lite]'
	$(PY) tools/lite_check.py

N ?= 1000
SEED ?= 0
JOBS ?= 2
fuzz: venv
	$(PY) tools/fuzz.py -n $(N) --seed $(SEED) --jobs $(JOBS)

bench: venv
	$(PY) benchmarks/run_all.py
	$(PY) benchmarks/native/bench.py
	$(PY) benchmarks/native/assemblers.py

# Our native code against gcc -O0/-O1 on C twins of the kernels (benchmarks/native/);
# gcc is needed only here. NATIVE_ARGS=--kernels fib,sieve --repeat 1 for a quick look.
NATIVE_ARGS ?=
.PHONY: bench-native
bench-native: venv
	$(PY) benchmarks/native/bench.py $(NATIVE_ARGS)

# Assembling speed: GNU as + ld, keystone and our own encoder on each kernel's file.
.PHONY: bench-asm
bench-asm: venv
	$(PY) benchmarks/native/assemblers.py

clean:
	rm -rf .pytest_cache .ruff_cache .hypothesis build *.egg-info
	find ssa_course tests tools benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

# Compare with Bril's reference tools on Bril's core benchmarks (BRIL=a checkout of
# sampsyo/bril). Not part of `make test`: it needs the checkout, deno and lark.
BRIL ?=
.PHONY: bril-conformance
bril-conformance: venv
	@if [ -z "$(BRIL)" ]; then \
	  echo "error: give a checkout of Bril's repository: make bril-conformance BRIL=/path/to/bril"; \
	  exit 2; fi
	@if [ ! -f "$(BRIL)/brili.ts" ]; then \
	  echo "error: $(BRIL) is not a checkout of Bril's repository (no brili.ts in it)"; \
	  exit 2; fi
	@test -x $(VENV)/bin/deno && $(PY) -c "import lark" 2>/dev/null || { \
	  echo "installing deno and lark into $(VENV)"; \
	  $(PY) -m pip install --quiet deno lark; }
	$(PY) tools/bril_conformance.py "$(BRIL)"
