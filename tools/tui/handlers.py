"""The handlers of the terminal UI's game commands (``undo``, ``hint``, ``new``, ``save``, ...).

:class:`GameCommands` is mixed into :class:`~tools.tui.app.TerminalUI`: each ``cmd_NAME(args)`` runs the
command ``NAME`` of the table in :mod:`tools.tui.commands` (``args``: the words after it) on the UI's session,
view and engine, and reports through ``say``. Stepping through a game (``next``, ``prev``, ...) is in
:mod:`tools.tui.review`.
"""
from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Callable, List, Optional

from rich.console import Console

from gomoku_ai.board import BoardSizeError
from gomoku_ai.player import Limit, Player, SearchInfo
from gomoku_ai.records import RecordFormatError
from gomoku_ai.rules import BLACK, WHITE, Rule, opponent

from . import commands as C
from .render import Theme, View, frame, result_text
from .session import (COLOR_NAME, DEFAULT_MOVE_SECONDS, Analysis, GameSession, build_limit, default_save_name,
                      parse_seconds, parse_size, parse_visits)

__all__ = ["GameCommands"]


class GameCommands:
    """The game commands of :class:`~tools.tui.app.TerminalUI` (a mixin: the attributes below are the UI's)."""

    session: GameSession
    view: View
    theme: Theme
    console: Console
    limit: Limit
    paused: bool
    quit: bool
    offered_save: bool
    max_moves: Optional[int]
    save_dir: str
    _prefill: str

    if TYPE_CHECKING:  # provided by TerminalUI and ReviewCommands
        @property
        def player(self) -> Player: ...
        def say(self, text: str, kind: str = "info") -> None: ...
        def think(self, purpose: str) -> Optional[SearchInfo]: ...
        def analyse(self) -> None: ...
        def policy_analysis(self) -> Optional[Analysis]: ...
        def _ensure_player(self) -> None: ...
        def _engine_text(self) -> str: ...
        def _after_step(self) -> None: ...
        def _rejoin(self) -> None: ...

    def cmd_help(self, args: List[str]) -> None:
        self.view.show_help = True

    def cmd_quit(self, args: List[str]) -> None:
        self.quit = True

    def cmd_undo(self, args: List[str]) -> None:
        s = self.session
        if not s.board.moves and s.resigned is None:
            self.say("Nothing to undo.", "error")
            return
        n = s.undo()
        self.player.new_game()
        self.paused = self.paused or not s.humans
        self.view.cursor = None
        self.offered_save = False
        self.say("Resignation taken back." if n == 0 else
                 f"Took back {n} move{'s' if n != 1 else ''}; 'redo' replays.", "ok")
        self._rejoin()

    def cmd_redo(self, args: List[str]) -> None:
        s = self.session
        n = s.redo()
        if n == 0:
            self.say("Nothing to redo.", "error")
            return
        names = " ".join(s.board.move_name(m) for m in s.board.moves[-n:])
        self.say(f"Replayed {n} move{'s' if n != 1 else ''}: {names}.", "ok")
        self._after_step()

    def cmd_hint(self, args: List[str]) -> None:
        s = self.session
        if s.is_over():
            self.say("The game is over: no hint.", "error")
            return
        info = self.think("hint")
        if info is None:
            return
        name = s.board.move_name(info.move)
        x, y = s.board.xy(info.move)
        wr = f", win chance {info.winrate:.0%} for {COLOR_NAME[s.side]}" if info.source == "mcts" \
            else f" ({info.source})"
        self.say(f"Hint: {name} ({x},{y}){wr}. Enter plays it.", "ok")
        self.view.cursor = info.move
        self._prefill = name

    def cmd_analyze(self, args: List[str]) -> None:
        s = self.session
        self.view.overlay = not self.view.overlay
        if not self.view.overlay:
            self.say("Overlay off.")
            return
        if s.key() not in s.analyses:
            pol = self.policy_analysis()
            if pol is not None and pol.heat is not None:
                s.analyses[s.key()] = pol
        if s.review:
            self.say("Overlay on: each position you step to is analysed.")
        elif s.analyses.get(s.key()) is not None and s.analyses[s.key()].pv:
            self.say("Overlay on: shading = where the engine looks, digits = its line.")
        else:  # no search of this position yet: no line to number
            self.say("Overlay on: shading = where the engine looks; 'hint' searches this position.")
        if s.review:
            if s.analyses.get(s.key()) is None or s.analyses[s.key()].source == "policy":
                s.analyses.pop(s.key(), None)
                self.analyse()

    def _new_session(self, session: GameSession) -> None:
        self.session = session
        self.view.session = session
        self.view.cursor = None
        self.paused = False
        self.offered_save = False
        self._ensure_player()
        self.player.new_game()
        self.view.engine = self._engine_text()

    def cmd_new(self, args: List[str]) -> None:
        s = self.session
        w, h, rule = s.board.width, s.board.height, s.rule
        try:
            for a in args:
                if a[0].isdigit():
                    w, h = parse_size(a)
                else:
                    rule = Rule.parse(a)
            humans = s.humans if not s.review else {BLACK}
            ns = GameSession(w, h, rule, humans, self.max_moves)
        except (ValueError, BoardSizeError) as e:
            self.say(f"new: {e}", "error")
            return
        self._new_session(ns)
        self.say(f"New game: {w}x{h} {rule.value}.", "ok")

    def cmd_swap(self, args: List[str]) -> None:
        s = self.session
        if len(s.humans) != 1:
            self.say("swap exchanges colours with the engine: use 'play black' or 'play white' "
                     "to play against it.", "error")
            return
        s.humans = {opponent(next(iter(s.humans)))}
        s.review = False
        self.paused = False
        c = next(iter(s.humans))
        self.say(f"You now play {self.theme.stone_mark(c)} {COLOR_NAME[c]}.", "ok")

    def cmd_play(self, args: List[str]) -> None:
        s = self.session
        if len(args) != 1 or args[0].lower() not in C.COLORS:
            self.say("play black|white|both|none: who you are from here.", "error")
            return
        who = args[0].lower()
        s.humans = {"black": {BLACK}, "white": {WHITE}, "both": {BLACK, WHITE},
                    "none": set()}[who]
        s.review = False
        s.forget_future()
        s.source = None
        self.paused = False
        self.player.new_game()
        self.say(f"Mode: {s.mode_name()}.", "ok")

    def cmd_watch(self, args: List[str]) -> None:
        self.cmd_play(["none"])

    def cmd_go(self, args: List[str]) -> None:
        s = self.session
        if s.review:
            self.say("Review mode: 'play black|white|none' continues the game from here.", "error")
            return
        if s.is_over():
            self.say("The game is over.", "error")
            return
        self.paused = False
        if s.side in s.humans:
            self.say("It is your move (the engine moves after you).")

    def cmd_resign(self, args: List[str]) -> None:
        s = self.session
        if s.is_over():
            self.say("The game is already over.", "error")
            return
        if s.review:
            self.say("Nothing to resign in review mode.", "error")
            return
        c = s.resign()
        self.say(f"{COLOR_NAME[c]} resigns.")
        self.offered_save = False

    def _set_limit(self, args: List[str], usage: str, example: str, parse: Callable[[str], float],
                   time_s: bool) -> None:
        """``time SECONDS`` / ``visits N``: one number (checked by ``parse``) becomes the engine's limit."""
        if len(args) != 1:
            self.say(f"{usage}: {example}.", "error")
            return
        try:
            value = parse(args[0])
        except ValueError as e:
            self.say(f"{usage}: {e}.", "error")
            return
        self.limit = build_limit(value, None) if time_s else build_limit(None, int(value))
        self.view.engine = self._engine_text()
        if time_s or not value:
            secs = value if time_s else DEFAULT_MOVE_SECONDS
            self.say(f"Engine: {secs:g} s per move.", "ok")
        else:
            self.say(f"Engine: {int(value)} visits per move.", "ok")

    def cmd_time(self, args: List[str]) -> None:
        self._set_limit(args, "time SECONDS", "e.g. 'time 5'", parse_seconds, time_s=True)

    def cmd_visits(self, args: List[str]) -> None:
        self._set_limit(args, "visits N", "e.g. 'visits 800' (0 goes back to time per move)", parse_visits,
                        time_s=False)

    def cmd_save(self, args: List[str]) -> None:
        path = " ".join(args) if args else default_save_name(self.save_dir)
        path = os.path.expanduser(path)
        if not path.lower().endswith((".sgf", ".psq", ".svg")):
            self.say("save FILE: the name must end in .sgf, .psq (a game) or .svg (an image).",
                     "error")
            return
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):  # the writer would create it: a typo would go unnoticed
            self.say(f"Could not save {path}: the folder {folder} does not exist.", "error")
            return
        if path.lower().endswith(".svg"):
            try:
                self.save_svg(path)
            except OSError as e:
                self.say(f"Could not save {path}: {e}", "error")
                return
            self.say(f"Saved the board as an image: {path}", "ok")
            return
        try:
            self.session.save(path, engine_name=self.player.name)
        except (OSError, ValueError) as e:
            self.say(f"Could not save {path}: {e}", "error")
            return
        self.say(f"Saved {self.session.ply} moves to {path}", "ok")

    def cmd_load(self, args: List[str]) -> None:
        if not args:
            self.say("load FILE [N]: a .sgf or .psq game file.", "error")
            return
        index = 0
        if len(args) > 1 and args[-1].isdigit():
            index = int(args[-1]) - 1
            args = args[:-1]
        path = os.path.expanduser(" ".join(args))
        try:
            rec = GameSession.load_record(path, self.session.rule, index)
            ns = GameSession.from_record(rec)
        except (OSError, ValueError, RecordFormatError) as e:
            self.say(f"Could not load {path}: {e}", "error")
            return
        ns.source = path
        ns.max_moves = None
        self._new_session(ns)
        self.say(f"Loaded {rec.width}x{rec.height} {rec.rule.value}, {len(rec.moves)} moves "
                 f"from {os.path.basename(path)}: prev/next/first/last step, hint asks the "
                 "engine, 'play black|white' continues.", "ok")
        if self.view.overlay:
            self.analyse()

    # ------------------------------------------------------------------ images
    def save_svg(self, path: str) -> None:
        """The current frame as an SVG image (a recording console, full colour)."""
        w = max(80, self.console.width)
        rec = Console(record=True, width=w, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor")
        view = View(self.session, self.theme, overlay=self.view.overlay,
                    messages=[m for m in self.view.messages if m[0] != "error"][-1:],
                    engine=self.view.engine)
        res = result_text(self.session)
        if res:
            view.messages = [("ok", res)]
        rec.print(frame(view, w, None))
        rec.save_svg(path, title="gomoku")
