# Set-up and everyday commands. Everything lives in .venv; only Python 3.11 and make are needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLAY_STAMP := $(VENV)/.installed-play
TEST_STAMP := $(VENV)/.installed-test

.PHONY: play test bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Playing needs numpy, onnxruntime, rich and prompt-toolkit only (never torch).
$(PLAY_STAMP): setup.cfg pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

# The test suite also covers training and the Ray backend, so it installs the dev, train
# (torch==2.13.0) and distributed (ray) extras.
$(TEST_STAMP): setup.cfg pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,train,distributed]'
	touch $@ $(PLAY_STAMP)

play: $(PLAY_STAMP)
	$(BIN)/gomoku play $(ARGS)

# mypy first (its settings, and the packages it checks, are the [mypy] section of setup.cfg), then the tests.
test: $(TEST_STAMP)
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(PLAY_STAMP)
	$(BIN)/gomoku bench $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
