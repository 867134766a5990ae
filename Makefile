# Set-up and everyday commands. Everything lives in .venv; only Python 3.11 and make are needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PLAY_STAMP := $(VENV)/.installed-play
WEB_STAMP := $(VENV)/.installed-web
TEST_STAMP := $(VENV)/.installed-test

.PHONY: play serve test browser bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Playing needs numpy, onnxruntime, rich and prompt-toolkit only (never torch). pip also compiles
# the optional C core (gomoku_ai/_native.c, setup.py) where a C compiler exists.
$(PLAY_STAMP): setup.cfg setup.py pyproject.toml gomoku_ai/_native.c | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

# The HTTP service and the browser board add FastAPI and uvicorn (the web extra).
$(WEB_STAMP): setup.cfg setup.py pyproject.toml gomoku_ai/_native.c | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[web]'
	touch $@ $(PLAY_STAMP)

# The test suite also covers training, the Ray backend and the web service, so it installs the
# dev (pytest, mypy, playwright), train (torch==2.13.0), distributed (ray) and web extras.
$(TEST_STAMP): setup.cfg setup.py pyproject.toml gomoku_ai/_native.c | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,train,distributed,web]'
	touch $@ $(PLAY_STAMP) $(WEB_STAMP)

# The browser tests drive the system's Chromium (Debian's package) with Playwright; Playwright's
# own browser download is never used. Installed here when missing and apt-get can run as root;
# otherwise the browser tests are skipped, and say why.
browser:
	@if command -v chromium >/dev/null 2>&1 || [ -x "$$CHROMIUM" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing Debian's chromium for the browser tests"; \
		( apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null ) \
			|| echo "could not install chromium: the browser tests will be skipped"; \
	else echo "no chromium, and apt-get cannot run as root here: the browser tests will be skipped"; fi

play: $(PLAY_STAMP)
	$(BIN)/gomoku play $(ARGS)

serve: $(WEB_STAMP)
	$(BIN)/gomoku serve $(ARGS)

# mypy first (its settings, and the packages it checks, are the [mypy] section of setup.cfg), then the tests,
# on TEST_WORKERS processes (pytest-xdist; the tests that start Ray share one of them, tests/conftest.py).
# One process: make test TEST_WORKERS=0.
TEST_WORKERS ?= 2
test: $(TEST_STAMP) browser
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

bench: $(PLAY_STAMP)
	$(BIN)/gomoku bench $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache gomoku_ai/_native.*.so
