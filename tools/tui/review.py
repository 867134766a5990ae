"""Stepping through a game in the terminal UI: ``next``, ``prev``, ``first``, ``last``, ``goto N``.

:class:`ReviewCommands` is mixed into :class:`~tools.tui.app.TerminalUI`. Stepping puts the session in review
mode (the engine does not move; ``play black|white`` leaves it), moves along the session's redo stack, and with
the overlay on analyses each position stepped to.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, List

from .render import View
from .session import GameSession

__all__ = ["ReviewCommands"]


class ReviewCommands:
    """The review commands of :class:`~tools.tui.app.TerminalUI` (a mixin: the attributes are the UI's)."""

    session: GameSession
    view: View

    if TYPE_CHECKING:  # provided by TerminalUI
        def say(self, text: str, kind: str = "info") -> None: ...
        def analyse(self) -> None: ...

    def _line_dropped(self, n: int) -> None:
        """Say that the move just played started a new line, dropping ``n`` moves of the redo stack."""
        s = self.session
        if n <= 0:
            return
        what = (f"later move{'s' if n != 1 else ''} of the loaded game" if s.source
                else f"move{'s' if n != 1 else ''} taken back")
        self.say(f"A new line starts at move {s.ply}: the {n} {what} "
                 f"{'are' if n != 1 else 'is'} dropped (undo gets them back).")

    def _rejoin(self) -> None:
        """After a step back: at the position where a new line started, the dropped line is the redo
        stack again (:meth:`GameSession.rejoin`); say so."""
        s = self.session
        new = len(s.future)
        n = s.rejoin()
        if n:
            self.say(f"Back where the lines split: 'redo' or 'next' replays the {n} move"
                     f"{'s' if n != 1 else ''} the new line had dropped (its {new} move"
                     f"{'s are' if new != 1 else ' is'} dropped now).", "ok")

    def _after_step(self) -> None:
        self.view.cursor = None
        if self.view.overlay and self.session.review:
            self.analyse()

    def _enter_review(self) -> None:
        s = self.session
        if not s.review:
            s.review = True
            self.say("Review mode: 'play black|white' goes back to playing from the position "
                     "on the board.")

    def cmd_next(self, args: List[str]) -> None:
        self._enter_review()
        if self.session.forward() is None:
            self.say("At the last move.", "error")
            return
        self._after_step()

    def cmd_prev(self, args: List[str]) -> None:
        self._enter_review()
        s = self.session
        if s.resigned is not None:
            s.resigned = None
        if s.back() is None:
            self.say("At the start.", "error")
            return
        self._rejoin()
        self._after_step()

    def cmd_first(self, args: List[str]) -> None:
        self._enter_review()
        self.session.resigned = None
        self.session.goto(0)
        self._after_step()

    def cmd_last(self, args: List[str]) -> None:
        self._enter_review()
        self.session.goto(self.session.total_plies())
        self._after_step()

    def cmd_goto(self, args: List[str]) -> None:
        if len(args) != 1 or not args[0].isdigit():
            self.say("goto N: go to the position after move N (0 = the start).", "error")
            return
        s = self.session
        self._enter_review()
        ply, total = int(args[0]), s.total_plies()
        if ply > total:
            self.say(f"goto {ply}: the game has {total} move{'s' if total != 1 else ''}; "
                     "this is the last.")
        s.goto(min(ply, total))
        self._after_step()
