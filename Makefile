# Torch × CUDA course. The README's two commands:
#   make lab    — set up .venv (once) and open JupyterLab on notebooks/
#   make test   — set up .venv (once), run the unit tests and every notebook in fast mode, then
#                 this commit's part of the gpu-size check (tools/gpu_sizes.py --rotate)
# Both install CuPy (and onnxruntime-gpu where it fits) when an NVIDIA driver is present
# (tools/gpu_extras.py picks cupy-cuda12x or cupy-cuda13x from nvidia-smi); nothing changes without one.
# Also: make html (executed pages in build/html), make slides (reveal.js decks in build/slides),
#       MODE=fast|cpu|gpu picks their size (default: this machine's);
#       make test-gpu-sizes (every notebook at gpu sizes on the CPU, 2 steps per loop; PART=K/N),
#       make bench (speed table in build/bench), make gpu-check PART=1/3 (a lent GPU, one 10-minute part),
#       make gpu-extras (re-check the GPU packages, e.g. after installing a driver).
# Variables: VENV=path (default .venv), PYTHON=python3.x, LAB_ARGS="--no-browser --port 8890",
#            NOTEBOOKS="notebooks/03_*.ipynb" (a subset), PYTEST_ARGS="-x -k env",
#            TEST_WORKERS=N (test processes; default one per core, at most 4; 1 runs them in this one).

PYTHON     ?= python3
VENV       ?= .venv
LAB_ARGS   ?=
NOTEBOOKS  ?= notebooks
PYTEST_ARGS ?=
CELL_TIMEOUT ?= 300
MODE ?=
# Tests run in TEST_WORKERS processes (pytest-xdist; each test file and each notebook stays in one
# process, in order). Each process runs PyTorch on one thread: two processes that each spin two
# OpenMP threads on two cores run the training notebooks 4× slower than one process does.
TEST_WORKERS ?= $(shell $(PYTHON) -c "import os; n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count(); print(max(1, min(4, n or 1)))" 2>/dev/null || echo 1)
XDIST := $(if $(filter-out 0 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile)
XDIST_ENV := $(if $(XDIST),OMP_NUM_THREADS=1)

BIN   := $(VENV)/bin
STAMP := $(VENV)/.course-installed
# Jupyter refuses to run as root unless told; CI containers run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: install lab test test-unit test-notebooks test-gpu-sizes soak html slides bench gpu-check gpu-extras clean help

help:
	@sed -n '2,14p' Makefile

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "the course needs Python 3.10 or newer; run make PYTHON=python3.12 ..."'
	$(PYTHON) -m venv $(VENV)

# Installs once; runs again only when pyproject.toml changes (a second `make` is instant).
$(STAMP): pyproject.toml tools/gpu_extras.py | $(BIN)/python
	@echo "Installing the course and its dependencies into $(VENV) (the first time takes a few minutes)"
	$(BIN)/python -m pip install -qq --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -qq --disable-pip-version-check -e '.[dev]'
	@$(BIN)/python tools/gpu_extras.py --install || echo "GPU packages not installed (see above); the course runs without them"
	@touch $@

gpu-extras: | $(BIN)/python
	$(BIN)/python tools/gpu_extras.py --install

install: $(STAMP)

lab: install
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# Unit tests and every notebook in one pytest run, fast mode, with per-notebook timings.
# Then (for the whole course) this commit's part of the gpu-size check below.
# (The notebooks first: each is a long unit that one process runs whole, and one left for last, a minute
# long, kept a process busy while the other had nothing more to run.)
test: install
	$(XDIST_ENV) COURSE_FAST=1 $(BIN)/python -m pytest $(NOTEBOOKS) tests $(XDIST) \
		--nbval-lax --nbval-cell-timeout=$(CELL_TIMEOUT) -p no:cacheprovider $(PYTEST_ARGS)
	$(if $(filter notebooks,$(NOTEBOOKS)),$(BIN)/python tools/gpu_sizes.py --rotate)

test-unit: install
	$(XDIST_ENV) COURSE_FAST=1 $(BIN)/python -m pytest tests $(XDIST) -p no:cacheprovider $(PYTEST_ARGS)

test-notebooks: install
	$(XDIST_ENV) COURSE_FAST=1 $(BIN)/python -m pytest $(NOTEBOOKS) $(XDIST) \
		--nbval-lax --nbval-cell-timeout=$(CELL_TIMEOUT) -p no:cacheprovider $(PYTEST_ARGS)

# Every notebook with gpu-mode sizes on the CPU, 2 steps per training/evaluation loop: shape and
# memory-layout errors of the gpu sizes show up without a GPU (times and accuracies mean nothing here).
# About 10 minutes in all; PART=K/N runs one part (tools/gpu_sizes.py --list), make test one per commit.
test-gpu-sizes: install
	$(BIN)/python tools/gpu_sizes.py --notebooks $(NOTEBOOKS) $(if $(PART),--part $(PART)) -- $(PYTEST_ARGS)

# The kernel-death hunt of issue 17: run notebook 11 (or NOTEBOOK=...) RUNS times under nbclient, as
# `make html` does; exits non-zero on any failed run (records in build/soak/). Slow: minutes per run.
RUNS ?= 20
soak: install
	$(BIN)/python tools/nb_soak.py $(or $(NOTEBOOK),notebooks/11_distributed.ipynb) --runs $(RUNS) --mode $(or $(MODE),cpu)

html: install
	$(BIN)/python tools/site.py html $(if $(MODE),--mode $(MODE)) $(filter-out notebooks,$(NOTEBOOKS))

slides: install
	$(BIN)/python tools/site.py slides $(if $(MODE),--mode $(MODE)) $(filter-out notebooks,$(NOTEBOOKS))

bench: install
	$(BIN)/python tools/bench.py $(BENCH_ARGS)

# On a GPU machine without this Makefile's venv (a bare image with torch and CuPy), python3 is used.
# PART=k/n runs the k-th of n parts, each sized for a 10-minute slot (tools/gpu_check.py --list shows them).
PART ?=
gpu-check:
	$(if $(wildcard $(BIN)/python),$(BIN)/python,python3) tools/gpu_check.py $(if $(PART),--part $(PART)) $(GPU_CHECK_ARGS)

clean:
	rm -rf build .pytest_cache
