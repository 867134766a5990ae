"""The terminal UI behind ``gomoku play``: rich for drawing, prompt-toolkit for input.

- :mod:`tools.tui.session`: the game state (board, redo stack, modes, records), no I/O;
- :mod:`tools.tui.render`: the board, panel and frame as rich renderables;
- :mod:`tools.tui.commands`: the command table, parsing and completion;
- :mod:`tools.tui.handlers`: the handlers of the game commands (``undo``, ``hint``, ``new``, ``save``, ...);
- :mod:`tools.tui.review`: stepping through a game (``next``, ``prev``, ``first``, ``last``, ``goto``);
- :mod:`tools.tui.engine`: the engine's Player, its searches in a worker thread, their analyses;
- :mod:`tools.tui.app`: the line readers, :class:`TerminalUI` (the main loop) and :func:`run`.
"""
from .app import PlainReader, PromptReader, TerminalUI, run

__all__ = ["TerminalUI", "PlainReader", "PromptReader", "run"]
