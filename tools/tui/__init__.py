"""The terminal UI behind ``gomoku play``: rich for drawing, prompt-toolkit for input.

- :mod:`tools.tui.session`: the game state (board, redo stack, modes, records), no I/O;
- :mod:`tools.tui.render`: the board, panel and frame as rich renderables;
- :mod:`tools.tui.commands`: the command table, parsing and completion;
- :mod:`tools.tui.app`: the main loop, the engine worker thread and :func:`run`.
"""
from .app import PlainReader, PromptReader, TerminalUI, run

__all__ = ["TerminalUI", "PlainReader", "PromptReader", "run"]
