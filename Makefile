# Two entry points (README quick start). Each sets up .venv on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check

.PHONY: demo test leaderboard clean

# The C sources too: editing one rebuilds the extensions (an editable install compiles it in place).
$(VENV)/.core: pyproject.toml setup.py $(wildcard tasks/captioning/meteor/*.c)
	python3 -m venv $(VENV)
	$(PIP) -e .
	touch $@

$(VENV)/.dev: pyproject.toml setup.py $(wildcard tasks/captioning/meteor/*.c)
	python3 -m venv $(VENV)
	$(PIP) -e '.[dev]'
	touch $@ $(VENV)/.core

# The main job on the bundled mini benchmark: list benchmarks, score every mini submission (one
# summary table; every metric of every file: add --verbose, or read the records in .venv/results).
demo: $(VENV)/.core
	$(VENV)/bin/vlbench tasks
	@echo
	$(VENV)/bin/vlbench score submissions/mini-*/*.json --out-dir "$(VENV)/results"

# Regenerate leaderboard/ from submissions/ (generated files: never edit them by hand).
leaderboard: $(VENV)/.core
	$(VENV)/bin/vlbench leaderboard build --submissions submissions --out leaderboard

# faulthandler_timeout: a test that runs past 15 minutes prints every thread's stack into the log
# (it does not stop the run), so a CI log that stalls shows where.
test: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -o faulthandler_timeout=900

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
