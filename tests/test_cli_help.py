"""The command line's help: every option of every ``gomoku`` subcommand (and of the ``python -m tools.X``
entry points) has a help text, shows its default, and reads as plain text (no reStructuredText, no pointers
into the source); ``gomoku --version`` prints what ``engine.py --version`` prints."""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest

from tools.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

#: what a help text must not contain: reStructuredText roles and literals, and source-file pointers
MARKUP = re.compile(r"``|:(func|class|mod|meth|attr|data):|see tools/|\b[\w.-]+/[\w./-]*\.py\b", re.I)


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def _parser_of(main: Callable[..., int]) -> argparse.ArgumentParser:
    """The parser a ``main(argv)`` builds, caught at its ``parse_args`` (nothing runs)."""
    def capture(self: argparse.ArgumentParser, *args, **kwargs):
        raise _Captured(self)
    saved = dict(os.environ)
    orig = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    try:
        main([])
    except _Captured as c:
        return c.parser
    finally:
        argparse.ArgumentParser.parse_args = orig  # type: ignore[method-assign]
        os.environ.clear()
        os.environ.update(saved)
    raise AssertionError(f"{main.__module__}.main built no parser")


def _walk(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _walk(sub)


def _all_parsers() -> List[Tuple[str, argparse.ArgumentParser]]:
    from tools import build_pbrain
    from tools.serve import app as serve
    from tools.tournament import cli as tournament
    from tools.train import gpu_burst
    roots = [build_parser(), gpu_burst.build_parser()] \
        + [_parser_of(m) for m in (serve.main, tournament.main, build_pbrain.main)]
    return [(p.prog, p) for root in roots for p in _walk(root)]


PARSERS = _all_parsers()


def test_the_walk_reaches_every_command():
    progs = {prog for prog, _ in PARSERS}
    for cmd in ("play", "bench", "serve", "tournament", "build-pbrain", "train", "train supervised",
                "train gate", "train loop", "train selfplay"):
        assert f"gomoku {cmd}" in progs, sorted(progs)
    assert {"python -m tools.serve", "python -m tools.build_pbrain",
            "python -m tools.train.gpu_burst"} <= progs
    assert sum(prog == "gomoku tournament" for prog, _ in PARSERS) == 2   # the subcommand and its main()


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction,
                                                                    argparse._VersionAction)):
            continue
        yield action


@pytest.mark.parametrize("prog,parser", PARSERS, ids=[p for p, _ in PARSERS])
def test_every_option_has_help_that_shows_its_default(prog, parser):
    missing, no_default = [], []
    for action in _options(parser):
        name = "/".join(action.option_strings) or action.dest
        if isinstance(action, argparse._SubParsersAction):
            missing += [f"{name} {c.dest}" for c in action._choices_actions if not c.help]
            continue
        if not (action.help or "").strip():
            missing.append(name)
            continue
        takes_value = action.option_strings and action.nargs != 0   # flags show no default
        if takes_value and action.default not in (None, "") and "%(default)" not in action.help:
            no_default.append(f"{name} (default {action.default!r})")
    assert not missing, f"{prog}: options without help: {missing}"
    assert not no_default, f"{prog}: help without %(default)s: {no_default}"


@pytest.mark.parametrize("prog,parser", PARSERS, ids=[p for p, _ in PARSERS])
def test_help_is_plain_text(prog, parser):
    text = parser.format_help()          # also expands every %(default)s
    texts = [text] + [a.help for a in _options(parser) if a.help] \
        + [c.help for a in parser._actions if isinstance(a, argparse._SubParsersAction)
           for c in a._choices_actions if c.help]
    bad = sorted({m.group(0) for t in texts for m in MARKUP.finditer(t)})
    assert not bad, f"{prog} --help contains {bad}:\n{text}"


def test_version_is_the_engines():
    """``gomoku --version`` and ``engine.py --version`` print the same line, built in one place."""
    from gomoku_ai import version_string
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cli = subprocess.run([sys.executable, "-m", "tools.cli", "--version"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    brain = subprocess.run([sys.executable, str(ROOT / "engine.py"), "--version"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert (cli.returncode, brain.returncode) == (0, 0), (cli.stderr, brain.stderr)
    assert cli.stdout == brain.stdout == version_string() + "\n"
    assert re.fullmatch(r"pygomoku \d+\.\d+\.\d+", version_string())


def test_engine_help_lists_its_options_and_exits():
    import subprocess
    import sys
    from pathlib import Path
    engine = Path(__file__).resolve().parents[1] / "engine.py"
    out = subprocess.run([sys.executable, str(engine), "--help"], capture_output=True, text=True,
                         timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("usage: engine.py")
    for opt in ("--model M", "--log FILE", "--list-models", "--version"):
        assert opt in out.stdout
