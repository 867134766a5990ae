# Set-up and everyday commands. Everything lives in .venv; only Python 3.11 is needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play test bench clean venv

$(STAMP): setup.cfg pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,train]'
	touch $(STAMP)

venv: $(STAMP)

play: $(STAMP)
	$(BIN)/gomoku play $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/gomoku bench $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
