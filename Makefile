# Torch × CUDA course. The README's two commands:
#   make lab    — set up .venv (once) and open JupyterLab on notebooks/
#   make test   — set up .venv (once), run the unit tests and every notebook in fast mode
# Also: make html (executed pages in build/html), make slides (reveal.js decks in build/slides),
#       MODE=fast|cpu|gpu picks their size (default: this machine's);
#       make bench (speed table in build/bench), make gpu-check (the one script for a lent GPU).
# Variables: VENV=path (default .venv), PYTHON=python3.x, LAB_ARGS="--no-browser --port 8890",
#            NOTEBOOKS="notebooks/03_*.ipynb" (a subset), PYTEST_ARGS="-x -k env".

PYTHON     ?= python3
VENV       ?= .venv
LAB_ARGS   ?=
NOTEBOOKS  ?= notebooks
PYTEST_ARGS ?=
CELL_TIMEOUT ?= 300
MODE ?=

BIN   := $(VENV)/bin
STAMP := $(VENV)/.course-installed
# Jupyter refuses to run as root unless told; CI containers run as root.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root,)

.PHONY: install lab test test-unit test-notebooks html slides bench gpu-check clean help

help:
	@sed -n '2,10p' Makefile

$(BIN)/python:
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "the course needs Python 3.10 or newer; run make PYTHON=python3.12 ..."'
	$(PYTHON) -m venv $(VENV)

# Installs once; runs again only when pyproject.toml changes (a second `make` is instant).
$(STAMP): pyproject.toml | $(BIN)/python
	@echo "Installing the course and its dependencies into $(VENV) (the first time takes a few minutes)"
	$(BIN)/python -m pip install -qq --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install -qq --disable-pip-version-check -e '.[dev]'
	@touch $@

install: $(STAMP)

lab: install
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(LAB_ARGS)

# Unit tests and every notebook in one pytest run, fast mode, with per-notebook timings.
test: install
	COURSE_FAST=1 $(BIN)/python -m pytest tests $(NOTEBOOKS) \
		--nbval-lax --nbval-cell-timeout=$(CELL_TIMEOUT) -p no:cacheprovider $(PYTEST_ARGS)

test-unit: install
	COURSE_FAST=1 $(BIN)/python -m pytest tests -p no:cacheprovider $(PYTEST_ARGS)

test-notebooks: install
	COURSE_FAST=1 $(BIN)/python -m pytest $(NOTEBOOKS) \
		--nbval-lax --nbval-cell-timeout=$(CELL_TIMEOUT) -p no:cacheprovider $(PYTEST_ARGS)

html: install
	$(BIN)/python tools/site.py html $(if $(MODE),--mode $(MODE)) $(filter-out notebooks,$(NOTEBOOKS))

slides: install
	$(BIN)/python tools/site.py slides $(if $(MODE),--mode $(MODE)) $(filter-out notebooks,$(NOTEBOOKS))

bench: install
	$(BIN)/python tools/bench.py $(BENCH_ARGS)

# On a GPU machine without this Makefile's venv (a bare image with torch and CuPy), python3 is used.
gpu-check:
	$(if $(wildcard $(BIN)/python),$(BIN)/python,python3) tools/gpu_check.py $(GPU_CHECK_ARGS)

clean:
	rm -rf build .pytest_cache
