# ssa_course: two commands matter.
#   make lab   -- set everything up, then open JupyterLab on the tour
#   make test  -- set everything up, then run the whole test suite
# Others: make exercises (regenerate exercises/ from solutions/), make bench, make lint,
#         make bench-native (our native code vs gcc on the kernels of benchmarks/native/),
#         make bench-asm (GNU as vs keystone vs our own assembler on those kernels),
#         make course (an nbgrader course directory in out/course, see docs/instructors.md),
#         make class-test (as root: JupyterHub, Unix accounts and the whole nbgrader loop),
#         make fuzz N=10000 [SEED=0] [JOBS=2] [PIPELINES=2] [WORKLIST_SEED=0] (generated
#         programs through every stage and random opt pipelines, peephole worklists in a
#         random order per program; shrunk mismatches go to out/fuzz/),
#         make bril-conformance BRIL=<bril checkout>,
#         make lite (the course as a static JupyterLite site in out/lite, docs/lite.md),
#         make lite-test (that site in headless Chromium, offline: every lesson, an exercise),
#         make clean (caches), make distclean (caches and the virtual environment).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_ARGS ?=
# the page `make lab` opens and prints (JupyterLab's own default is the Launcher, /lab)
TOUR_URL := /lab/tree/notebooks/00-tour.ipynb
COURSE_ARGS ?=
CLASS_ARGS ?=
# Jupyter refuses to start as root unless told to (containers and fresh cloud machines
# often log in as root); USER_ID can be overridden to check both cases with `make -n lab`.
USER_ID ?= $(shell id -u)
ROOT_FLAG := $(if $(filter 0,$(USER_ID)),--allow-root,)
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

.PHONY: lite lite-test browser-test lab test venv graphviz binutils bubblewrap exercises course bench clean \
	distclean lint fuzz bril-conformance class-test

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

# Grading runs every line a student wrote inside bubblewrap (docs/grading.md): installed
# with apt-get when root on a Debian-like system, else a one-line hint; without it,
# autograde refuses in one line (nothing else needs it).
bubblewrap:
	@if command -v bwrap >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing bubblewrap (apt-get install bubblewrap)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null) \
	  || echo "note: could not install bubblewrap; autograding refuses until it is there (docs/grading.md)"; \
	else \
	  echo "note: bubblewrap ('bwrap') not found; install it (e.g. 'sudo apt-get install bubblewrap') before autograding (docs/grading.md)"; \
	fi

# GNU as + ld assemble and link the native code of lesson 11 (keystone, a Python package,
# stands in when they are missing; so does our own aarch64 encoder); the aarch64 pair
# (binutils-aarch64-linux-gnu) and qemu-user run the second target as real processes.
binutils:
	@if command -v as >/dev/null 2>&1 && command -v ld >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing GNU binutils (apt-get install binutils)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends binutils >/dev/null) \
	  || echo "note: could not install binutils; native code is assembled by keystone instead"; \
	else \
	  echo "note: GNU 'as'/'ld' not found; install binutils (e.g. 'sudo apt-get install binutils') for the primary assembler (keystone is used meanwhile)"; \
	fi
	@if command -v aarch64-linux-gnu-as >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing the aarch64 binutils and qemu-user (apt-get install binutils-aarch64-linux-gnu qemu-user)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends binutils-aarch64-linux-gnu qemu-user >/dev/null) \
	  || echo "note: could not install them; aarch64 code is assembled by our own encoder and run under unicorn"; \
	else \
	  echo "note: no aarch64-linux-gnu-as or qemu-aarch64; install binutils-aarch64-linux-gnu and qemu-user for them (our own encoder and unicorn are used meanwhile)"; \
	fi

# The cross C compiler the aarch64 benchmark table compares with (benchmarks only).
cross-gcc:
	@if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing gcc-aarch64-linux-gnu (apt-get install gcc-aarch64-linux-gnu)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu >/dev/null) \
	  || echo "note: could not install gcc-aarch64-linux-gnu; the aarch64 table is skipped"; \
	else \
	  echo "note: no aarch64-linux-gnu-gcc; install gcc-aarch64-linux-gnu for the aarch64 table"; \
	fi

valgrind:
	@if command -v valgrind >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing valgrind (apt-get install valgrind)"; \
	  (apt-get update -qq && apt-get install -y -qq --no-install-recommends valgrind >/dev/null) \
	  || echo "note: could not install valgrind; the x86-64 instruction table is skipped"; \
	else \
	  echo "note: no valgrind; install valgrind for the x86-64 instruction table"; \
	fi

lab: venv graphviz binutils bubblewrap
	$(VENV)/bin/jupyter lab notebooks/00-tour.ipynb --ServerApp.root_dir="$(CURDIR)" --LabApp.default_url=$(TOUR_URL) $(ROOT_FLAG) $(LAB_ARGS)

# ruff, then the type checker (mypy; what it checks: [tool.mypy] in pyproject.toml), then
# the tests, one pytest-xdist worker per core (TEST_JOBS=0: all in this one process; an
# idle worker steals queued tests from a busy one); the 15 slowest tests are listed.
TEST_JOBS ?= auto
test: venv graphviz binutils bubblewrap
	$(VENV)/bin/ruff check ssa_course tests benchmarks tools
	$(PY) -m mypy
	$(PY) -m pytest -n $(TEST_JOBS) --dist worksteal --durations=15

lint: venv
	$(VENV)/bin/ruff check ssa_course tests benchmarks tools
	$(PY) -m mypy

exercises: venv
	$(PY) tools/make_exercises.py

# A ready nbgrader course directory (out/course) from solutions/; docs/instructors.md.
course: venv bubblewrap
	$(PY) tools/make_course.py $(COURSE_ARGS)

# A real class on a real JupyterHub (docs/instructors.md, section 4): JupyterHub with PAM
# logins and one Unix account per person, an instructor and three students, the whole
# nbgrader loop through the hub's API. Not part of `make test`: it needs root (it creates
# and removes the accounts) and takes a few minutes. Node/npm come from Debian,
# configurable-http-proxy from npm into out/hub, jupyterhub from PyPI (the `class` extra).
CHP := out/hub/node_modules/.bin/configurable-http-proxy
class-test:
	@if [ "$$(id -u)" != "0" ]; then \
	  echo "error: make class-test must run as root (it creates Unix accounts and starts JupyterHub, which starts each user's server as that user)"; \
	  exit 1; fi
	@$(MAKE) --no-print-directory venv bubblewrap
	@$(PY) -c "import jupyterhub" 2>/dev/null || $(PY) -m pip install --quiet -e '.[dev,class]'
	@command -v npm >/dev/null 2>&1 || { echo "installing Node.js and npm (apt-get install nodejs npm)"; \
	  apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; }
	@test -x $(CHP) || { echo "installing configurable-http-proxy into out/hub (npm)"; \
	  mkdir -p out/hub && npm install --silent --no-fund --no-audit --prefix out/hub \
	    "configurable-http-proxy@$$(node -e 'console.log(+process.versions.node.split(".")[0] >= 20 ? 5 : 4)')"; }
	$(PY) tools/class_test.py --proxy $(CHP) $(CLASS_ARGS)

# Drive the tour's explore() panel in headless Chromium (Debian's chromium + playwright,
# no browser download). Not part of `make test`: it needs a browser on the machine.
browser-test: venv graphviz binutils bubblewrap
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else echo "note: install Chromium (e.g. 'sudo apt-get install chromium') first"; exit 1; fi; \
	fi
	$(PY) -m pip install --quiet playwright
	$(PY) tools/browser_check.py
	$(PY) tools/browser_linked.py
	$(PY) tools/browser_steps.py

# The course in the browser (docs/lite.md). Not part of `make test`: building downloads
# Pyodide and Graphviz-as-WebAssembly from npm and pure wheels from the package index.
# the `lite` extra's requirements only: neither tool imports the package (the site gets a
# wheel built from the checkout), so the environment's install of it is left as it is
LITE_DEPS = $(PY) -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["lite"]))'
lite: venv
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && apt-get install -y -qq --no-install-recommends npm >/dev/null; \
	  else echo "error: npm is needed (e.g. 'sudo apt-get install npm')"; exit 1; fi; }
	$(PY) -m pip install --quiet $$($(LITE_DEPS))
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
	$(PY) -m pip install --quiet $$($(LITE_DEPS))
	$(PY) tools/lite_check.py

N ?= 1000
SEED ?= 0
JOBS ?= 2
PIPELINES ?= 2
WORKLIST_SEED ?= 0
fuzz: venv
	$(PY) tools/fuzz.py -n $(N) --seed $(SEED) --jobs $(JOBS) --pipelines $(PIPELINES) \
	  --worklist-seed $(WORKLIST_SEED)

bench: venv binutils cross-gcc valgrind
	$(PY) benchmarks/run_all.py
	$(PY) benchmarks/compile_memory.py
	$(PY) benchmarks/linked.py
	$(PY) benchmarks/native/bench.py
	$(PY) benchmarks/native/assemblers.py
	$(PY) benchmarks/native/aarch64.py
	$(PY) benchmarks/native/x86_counts.py
	$(PY) benchmarks/grading.py $(GRADING_ARGS)

# nbgrader autograde at class scale: seconds per submission for each exercise (30
# generated submissions each, 2 at a time), the sandbox's share of it, where the rest goes,
# the projection for 200, then tools/grade_class.py (Dask) on 1 and 2 workers: the
# speed-up (about 35 minutes on two cores; docs/grading.md, "Speed at class scale").
# GRADING_ARGS="--exercises 10-escape --submissions 10" for a quick look;
# "--cluster-submissions 0" leaves out the Dask run, "--skip-checks" the in-process table.
GRADING_ARGS ?=
.PHONY: bench-grading
bench-grading: venv
	$(PY) benchmarks/grading.py $(GRADING_ARGS)

# Our native code against gcc -O0/-O1 on C twins of the kernels (benchmarks/native/),
# then the aarch64 table (instructions under unicorn, time under qemu, against
# aarch64-linux-gnu-gcc -O1); gcc is needed only here.
# NATIVE_ARGS=--kernels fib,sieve --repeat 1 for a quick look (all three scripts read them).
NATIVE_ARGS ?=
.PHONY: bench-native cross-gcc valgrind
bench-native: venv binutils cross-gcc valgrind
	$(PY) benchmarks/native/bench.py $(NATIVE_ARGS); status=$$?; \
	$(PY) benchmarks/native/aarch64.py $(NATIVE_ARGS) || status=1; \
	$(PY) benchmarks/native/x86_counts.py $(NATIVE_ARGS) || status=1; \
	exit $$status

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
