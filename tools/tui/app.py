"""The terminal UI's main loop: input (prompt-toolkit), output (rich), the engine in a thread.

:class:`TerminalUI` takes its console, its line reader and its player from the caller, so tests drive
it with a pipe input and a recording console; :func:`run` builds the real ones for
``gomoku play``.

Screen: the console is cleared and one frame (board + panel) is drawn before each prompt; while the
engine thinks, the frame is redrawn live (rich.Live) with its progress, and Ctrl-C (SIGINT) sets the
search's stop event, so the engine plays its best move so far and the program goes on.
"""
from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Hashable, List, Optional, TextIO, Tuple

import numpy as np
from rich.console import Console

from gomoku_ai import movegen
from gomoku_ai.board import Board, BoardSizeError
from gomoku_ai.player import Limit, NoMoveError, Player, SearchInfo
from gomoku_ai.net.model import masked_softmax
from gomoku_ai.records import RecordFormatError
from gomoku_ai.rules import BLACK, WHITE, Rule
from gomoku_ai.shipped import factory_key, make_with, takes_size
from protocol.think import ThinkJob

from . import commands as C
from .render import Theme, Thinking, View, frame
from .session import COLOR_NAME, Analysis, GameSession, MoveError, default_save_name, parse_size


# ============================================================================ line readers
class PlainReader:
    """Reads lines from a text stream (a pipe, a file, a test): no editing, no completion."""

    interactive = False

    def __init__(self, stream: TextIO, console: Console) -> None:
        self.stream = stream
        self.console = console

    def read(self, message: str, default: str = "", placeholder: str = "") -> str:
        self.console.print(message, end="", markup=False, highlight=False)
        self.console.file.flush()
        line = self.stream.readline()
        if not line:
            raise EOFError
        self.console.print(line.rstrip("\n"), markup=False, highlight=False)
        return line.rstrip("\r\n")


class PromptReader:
    """prompt-toolkit line editing with history, Tab completion and a board cursor on the arrow keys
    (when the line is empty or holds the cursor's square)."""

    interactive = True

    def __init__(self, ui: "TerminalUI", input=None, output=None) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import InMemoryHistory
        self.ui = ui
        self.session = PromptSession(history=InMemoryHistory(), completer=C.make_completer(),
                                     complete_while_typing=False, key_bindings=self._bindings(),
                                     input=input, output=output)

    def _bindings(self):
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.key_binding import KeyBindings
        kb = KeyBindings()
        ui = self.ui

        @Condition
        def cursor_mode() -> bool:
            from prompt_toolkit.application import get_app
            text = get_app().current_buffer.text.strip()
            return text == "" or (ui.view.cursor is not None and
                                  text == ui.session.board.move_name(ui.view.cursor))

        def mover(dx: int, dy: int):
            def handler(event) -> None:
                name = ui.move_cursor(dx, dy)
                buf = event.current_buffer
                buf.text = name
                buf.cursor_position = len(name)
                run_in_terminal(ui.redraw)
            return handler

        for key, d in (("up", (0, -1)), ("down", (0, 1)), ("left", (-1, 0)), ("right", (1, 0))):
            kb.add(key, filter=cursor_mode)(mover(*d))
        return kb

    def read(self, message: str, default: str = "",
             placeholder: str = "a move (h8 or 7,7), or help") -> str:
        from prompt_toolkit.formatted_text import FormattedText
        return self.session.prompt(FormattedText([("bold", message)]), default=default,
                                   placeholder=FormattedText([("fg:ansibrightblack", placeholder)]))


# ============================================================================ the UI
class TerminalUI:
    """One terminal session of games. ``player_factory(rule, width, height)`` (or
    ``player_factory(rule)``) gives the engine for a rule and board size (called again when ``new`` or
    ``load`` changes what it would give: its ``key(rule, width, height)`` when it has one, else the
    rule, and the size for a factory that takes it); ``limit`` is the engine's per-move budget."""

    def __init__(self, session: GameSession, player_factory: Callable[..., Player],
                 limit: Limit, console: Console, reader: Any = None, *,
                 no_color: bool = False, export_svg: Optional[str] = None,
                 engine_label: str = "", watch_delay_s: float = 0.0,
                 save_dir: str = ".", model: Optional[str] = None) -> None:
        self.session = session
        self.model = model
        self.player_factory = player_factory
        self._factory_sized = takes_size(player_factory)
        self.player_key = self._player_key()
        self.player = self._make_player()
        self.limit = limit
        self.console = console
        self.theme = Theme.for_console(console, no_color)
        self.reader = reader
        self.export_svg = export_svg
        self.engine_label = engine_label
        self.watch_delay_s = watch_delay_s
        self.save_dir = save_dir
        self.view = View(session, self.theme, engine=self._engine_text())
        self.log: List[Tuple[str, str]] = []  # every message shown, for tests and debugging
        self.quit = False
        self.paused = False
        self.offered_save = False
        self._ctrl_c = 0
        self._prefill = ""
        self._lock = threading.Lock()
        self.max_moves = session.max_moves

    # ------------------------------------------------------------------ output
    def _engine_text(self) -> str:
        lim = self.limit
        budget = (f"{lim.visits:,} visits" if lim.visits
                  else f"{(lim.soft_ms or 0) / 1000:g} s")
        label = self.engine_label or _model_label(self.model, self.player, self.session.rule)
        return f"{label}, {budget}"

    def say(self, text: str, kind: str = "info") -> None:
        self.log.append((kind, text))
        self.view.messages.append((kind, text))
        del self.view.messages[:-6]

    def frame(self):
        w = self.console.width
        h = self.console.height if self.console.is_terminal else None
        self.view.footer = self._footer()
        return frame(self.view, w, h, C.help_rows())

    def _footer(self) -> str:
        s = self.session
        if s.is_over():
            return "new · undo · save FILE · quit"
        if s.review:
            return "Enter/next · prev · first · last · hint"
        if self.paused:
            return "go: resume · undo · help · quit"
        return "undo · hint · analyze · help · quit"

    def redraw(self) -> None:
        if self.console.is_terminal:
            self.console.clear()
        self.console.print(self.frame())

    # ------------------------------------------------------------------ main loop
    def run(self) -> int:
        s = self.session
        if not self.view.messages:
            you = sorted(s.humans)
            if s.review:
                self.say(f"Reviewing {s.total_plies()} moves: Enter or next/prev, first/last, "
                         "hint; 'play black' continues against the engine.")
            elif len(you) == 1:
                self.say(f"You play {self.theme.stone_mark(you[0])} {COLOR_NAME[you[0]]}. "
                         "Type a move like h8 (column, row from the top) or 7,7; help lists "
                         "commands.")
        try:
            while not self.quit:
                try:
                    self.step()
                except KeyboardInterrupt:  # Ctrl-C outside the prompt and the engine's search
                    if not self.session.humans:
                        self.paused = True
                    self.say("Interrupted. 'quit' leaves" +
                             ("; 'go' resumes watching." if self.paused else "."))
        finally:
            if self.export_svg:
                self.save_svg(self.export_svg)
        return 0

    def step(self) -> None:
        """One turn of the loop: an engine move, a game-end offer, or one line of input."""
        s = self.session
        if s.engine_to_move() and not self.paused:
            self.engine_move()
            return
        if s.is_over() and not self.offered_save:
            self.offered_save = True
            self.offer_save()
            return
        if self.view.overlay:
            self._overlay_for_position()
        self.redraw()
        prompt = self._prompt_text()
        default, self._prefill = self._prefill, ""
        try:
            line = self.reader.read(prompt, default=default)
        except EOFError:
            self.quit = True
            return
        except KeyboardInterrupt:
            self._ctrl_c += 1
            if self._ctrl_c >= 2:
                self.quit = True
            else:
                self.say("Ctrl-C again (or quit, or Ctrl-D) leaves.")
            return
        self._ctrl_c = 0
        self.handle(line)

    def _prompt_text(self) -> str:
        s = self.session
        if s.is_over():
            return "game over › "
        mark = self.theme.stone_mark(s.side)
        return f"{mark} {COLOR_NAME[s.side].lower()} {s.ply + 1} › "

    def offer_save(self) -> None:
        s = self.session
        from .render import result_text
        self.log.append(("ok", result_text(s) or "Game over"))  # the panel shows it already
        if not s.board.moves or s.source:
            return
        self.redraw()
        suggested = default_save_name(self.save_dir)
        try:
            ans = self.reader.read("Save this game? [y/N or a file name] ",
                                   placeholder="y saves as " + os.path.basename(suggested)).strip()
        except (EOFError, KeyboardInterrupt):
            return
        if ans.lower() in ("", "n", "no"):
            self.say("Not saved. 'save FILE' still can; 'new' starts another game.")
            return
        if ans.lower() not in ("y", "yes") and C.parse_line(ans).kind == "command":
            self.handle(ans)  # e.g. 'new' or 'quit' instead of an answer
            return
        path = suggested if ans.lower() in ("y", "yes") else ans
        self.cmd_save([path])

    # ------------------------------------------------------------------ input
    def handle(self, line: str) -> None:
        s = self.session
        p = C.parse_line(line)
        self.view.show_help = False
        self.view.messages.clear()  # the panel shows what the last line of input caused
        if p.kind == "empty":
            if s.review and s.future:
                self.cmd_next([])
            return
        if p.kind == "move":
            self.human_move(p.text)
            return
        if p.kind == "unknown" and any(ch.isdigit() for ch in p.text) and not p.suggestion:
            self.human_move(p.text)  # a mistyped move: check_move explains
            return
        if p.kind == "unknown":
            hint = f" Did you mean '{p.suggestion}'?" if p.suggestion else ""
            self.say(f"Unknown command '{p.text}'.{hint} Type a move like h8 or 7,7, or 'help'.",
                     "error")
            return
        getattr(self, "cmd_" + p.name)(list(p.args))

    def human_move(self, text: str) -> None:
        s = self.session
        if s.engine_to_move() and not self.paused:
            self.say("It is the engine's turn.", "error")
            return
        try:
            m = s.check_move(text)
        except MoveError as e:
            self.say(str(e), "error")
            return
        s.play(m)
        self.view.cursor = None
        self._after_move()

    def _after_move(self) -> None:
        s = self.session
        if s.is_over():
            self.offered_save = False
        elif self.view.overlay and s.review:
            self.analyse()

    def move_cursor(self, dx: int, dy: int) -> str:
        """Move the board cursor (arrow keys); returns the square's name."""
        b = self.session.board
        if self.view.cursor is None:
            start = b.last_move
            if start is None:
                start = b.index(b.width // 2, b.height // 2)
            self.view.cursor = start
        else:
            x, y = b.xy(self.view.cursor)
            x = min(b.width - 1, max(0, x + dx))
            y = min(b.height - 1, max(0, y + dy))
            self.view.cursor = b.index(x, y)
        return b.move_name(self.view.cursor)

    # ------------------------------------------------------------------ the engine
    def _player_key(self) -> Hashable:
        s = self.session
        return factory_key(self.player_factory, s.rule, s.board.width, s.board.height,
                           self._factory_sized)

    def _make_player(self) -> Player:
        s = self.session
        return make_with(self.player_factory, s.rule, s.board.width, s.board.height,
                         self._factory_sized)

    def _ensure_player(self) -> None:
        key = self._player_key()
        if key != self.player_key:
            self.player = self._make_player()
            self.player_key = key
            self.view.engine = self._engine_text()

    def think(self, purpose: str) -> Optional[SearchInfo]:
        """Run Player.think in a worker thread (:class:`protocol.think.ThinkJob`, no deadline), showing
        live progress; Ctrl-C sets its stop event and the engine's best move so far comes back."""
        self._ensure_player()
        s = self.session
        board = s.board.copy()
        key = s.key()
        tk = Thinking(purpose=purpose, color=s.side, limit_ms=self.limit.soft_ms,
                      limit_visits=self.limit.visits)
        self.view.thinking = tk
        player = self.player

        def on_info(info: SearchInfo) -> None:  # worker thread
            a = self._snapshot(board, info, key)
            with self._lock:
                tk.elapsed_ms = info.elapsed_ms
                tk.visits = info.visits
                tk.nodes_per_s = info.nodes_per_s
                tk.move = info.move
                tk.winrate = info.winrate
                tk.pv = list(info.pv)
                tk.source = info.source
                self.view.live_analysis = a

        job = ThinkJob(on_info, name="engine")

        def interrupt(signum, frame_) -> None:
            job.stop.set()
            tk.stopping = True
            self._interrupted = True

        self._interrupted = False
        old = None
        try:
            old = signal.signal(signal.SIGINT, interrupt)
        except ValueError:  # not the main thread (e.g. embedded): Ctrl-C cannot be caught here
            old = None
        job.start(player, board, self.limit)
        try:
            if self.console.is_terminal:
                from rich.live import Live
                self.console.clear()
                # the whole frame when it fits the terminal, else the board once and the
                # progress lines live below it (a taller Live region would scroll and smear)
                whole = self._frame_height() < self.console.height
                if not whole:
                    self.console.print(self.frame())
                with Live(self._live_renderable(whole), console=self.console,
                          auto_refresh=False, transient=not whole,
                          vertical_overflow="crop") as live:
                    def refresh() -> None:
                        now_ms = (time.perf_counter() - tk.started) * 1000.0
                        tk.elapsed_ms = max(tk.elapsed_ms, now_ms)
                        with self._lock:
                            live.update(self._live_renderable(whole), refresh=True)
                    job.wait(poll_s=0.1, on_poll=refresh)
            else:
                job.wait(poll_s=0.1)
        except KeyboardInterrupt:  # a Ctrl-C that reached the default handler after all
            job.stop.set()
            self._interrupted = True
            job.wait()
        finally:
            if old is not None:
                signal.signal(signal.SIGINT, old)
            self.view.thinking = None
            self.view.live_analysis = None
        if job.error is not None:
            err = job.error
            if isinstance(err, NoMoveError):
                self.say(f"The engine has no move: {err}", "error")
                return None
            raise err
        info = job.info
        assert info is not None  # Player.think returns a SearchInfo or raises
        a = self._snapshot(board, info, key, final=True)
        s.analyses[key] = a
        if a.black_winrate is not None:
            s.last_eval = (s.ply, a.black_winrate)
        return info

    def _frame_height(self) -> int:
        return len(self.console.render_lines(self.frame(), self.console.options, pad=False))

    def _live_renderable(self, whole: bool):
        if whole:
            return self.frame()
        from rich.console import Group
        from .render import thinking_lines
        return Group(*[t for _, t in thinking_lines(self.view, min(60, self.console.width))])

    def _snapshot(self, board: Board, info: SearchInfo,
                  key: Tuple[int, int], final: bool = False) -> Analysis:
        """An Analysis of the searched position from a SearchInfo and its root candidates (called
        in the search thread with a progress report, or after the search finished)."""
        side = board.side_to_move
        wr = info.winrate
        black_wr = wr if side == BLACK else 1.0 - wr
        heat = None
        top: List[Tuple[int, float, Optional[float]]] = []
        source = info.source or "search"
        if info.source == "mcts":
            source = "search"
            visits = info.visit_map(board.size)
            tot = float(visits.sum())
            if tot > 0:
                heat = visits / tot
            for m, n, q, _prior in info.candidates[:5]:
                if tot > 0:
                    top.append((m, n / tot, (q + 1.0) / 2.0))
        else:
            heat = np.zeros(board.size, np.float32)
            heat[info.move] = 1.0
            top = [(info.move, 1.0, wr)]
        if info.source in ("static", "block5"):
            black_wr = None  # no evaluation behind these answers
        return Analysis(key=key, heat=heat, pv=list(info.pv), black_winrate=black_wr, top=top,
                        source=source, visits=info.visits, move=info.move)

    def engine_move(self) -> None:
        s = self.session
        t0 = time.perf_counter()
        info = self.think("move")
        if info is None:
            self.paused = True
            return
        if not s.board.is_empty(info.move):  # never expected: Player.think checks it
            self.say("The engine returned an occupied square.", "error")
            self.paused = True
            return
        s.play(info.move, int(info.elapsed_ms))
        x, y = s.board.xy(info.move)
        extra = f", {info.visits:,} visits" if info.visits else f" ({info.source})"
        if self._interrupted:
            extra += ", stopped early"
        self.view.messages[:] = [m for m in self.view.messages
                                 if not m[1].startswith("Engine played")]
        self.say(f"Engine played {s.board.move_name(info.move)} ({x},{y}) in "
                 f"{info.elapsed_ms / 1000:.1f} s{extra}.")
        if self._interrupted and not s.humans:
            self.paused = True
            self.say("Paused: 'go' resumes watching; a move, undo, hint, save... work too.")
        self._after_move()
        if not s.humans and self.watch_delay_s > 0:
            rest = self.watch_delay_s - (time.perf_counter() - t0)
            if rest > 0:
                time.sleep(rest)

    def _overlay_for_position(self) -> None:
        """Without a search of this position, show the evaluator's policy and the rest of the
        previous search's principal variation (the engine's expected continuation)."""
        s = self.session
        key = s.key()
        if key in s.analyses or s.is_over():
            return
        pol = self.policy_analysis()
        if pol is None:
            return
        b = s.board
        if b.moves:
            last = b.moves[-1]
            b.pop()
            prev = s.analyses.get(s.key())
            b.push(last)
            if prev is not None and len(prev.pv) > 1 and prev.pv[0] == last:
                pol.pv = list(prev.pv[1:])
        s.analyses[key] = pol

    def analyse(self) -> None:
        """Search the current position for the overlay (review mode, or on request)."""
        s = self.session
        if s.is_over() or s.key() in s.analyses:
            return
        self.think("analysis")

    def policy_analysis(self) -> Optional[Analysis]:
        """The evaluator's policy for the position on the board (a cheap overlay)."""
        self._ensure_player()
        s = self.session
        b = s.board
        if s.is_over():
            return None
        ev = self.player.evaluator
        try:
            item = ev.prepare(b)
            logits, values = ev.evaluate([item], (b.height, b.width))
        except Exception:  # noqa: BLE001 - the overlay is optional
            return None
        legal = movegen.legal_mask(b)
        if not legal.any():
            return None
        p = masked_softmax(np.asarray(logits[0], np.float64).reshape(1, -1), legal[None], np.float64)[0]
        order = np.argsort(-p)[:4]
        v = float(values[0])
        black = (v + 1) / 2 if s.side == BLACK else (1 - v) / 2
        flat = np.ptp(p[legal]) < 1e-9
        return Analysis(key=s.key(), heat=None if flat else p.astype(np.float32), pv=[],
                        black_winrate=None if ev.name in ("uniform",) else black,
                        top=[] if flat else [(int(m), float(p[m]), None) for m in order],
                        source="policy")

    # ------------------------------------------------------------------ commands
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

    def cmd_redo(self, args: List[str]) -> None:
        if self.session.forward() is None:
            self.say("Nothing to redo.", "error")
            return
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
        self.say("Overlay on: shading = where the engine looks, digits = its line." if not s.review
                 else "Overlay on: each position you step to is analysed.")
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
        s.humans = {3 - next(iter(s.humans))}
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
        s.future.clear()
        s.future_times.clear()
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
        self._enter_review()
        self.session.goto(int(args[0]))
        self._after_step()

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

    def cmd_time(self, args: List[str]) -> None:
        try:
            sec = float(args[0])
            if sec <= 0:
                raise ValueError
        except (IndexError, ValueError):
            self.say("time SECONDS: e.g. 'time 5'.", "error")
            return
        self.limit = Limit(soft_ms=sec * 1000.0)
        self.view.engine = self._engine_text()
        self.say(f"Engine: {sec:g} s per move.", "ok")

    def cmd_visits(self, args: List[str]) -> None:
        try:
            n = int(args[0])
            if n < 0:
                raise ValueError
        except (IndexError, ValueError):
            self.say("visits N: e.g. 'visits 800' (0 goes back to time per move).", "error")
            return
        self.limit = Limit(visits=n) if n else Limit(soft_ms=2000.0)
        self.view.engine = self._engine_text()
        self.say(f"Engine: {n} visits per move." if n else "Engine: 2 s per move.", "ok")

    def cmd_save(self, args: List[str]) -> None:
        path = " ".join(args) if args else default_save_name(self.save_dir)
        path = os.path.expanduser(path)
        if path.lower().endswith(".svg"):
            try:
                self.save_svg(path)
            except OSError as e:
                self.say(f"Could not save {path}: {e}", "error")
                return
            self.say(f"Saved the board as an image: {path}", "ok")
            return
        if not path.lower().endswith((".sgf", ".psq")):
            self.say("save FILE: the name must end in .sgf, .psq (a game) or .svg (an image).",
                     "error")
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
        from .render import result_text
        res = result_text(self.session)
        if res:
            view.messages = [("ok", res)]
        rec.print(frame(view, w, None))
        rec.save_svg(path, title="gomoku")


# ============================================================================ entry point
def build_limit(time_s: Optional[float], visits: Optional[int]) -> Limit:
    if visits:
        return Limit(visits=int(visits))
    return Limit(soft_ms=float(time_s if time_s is not None else 2.0) * 1000.0)


def _model_label(model: Optional[str], player: Player, rule: Rule) -> str:
    """What plays: the model's file name, or the evaluator's name."""
    if player.evaluator.name == "network":
        base = getattr(getattr(player.evaluator, "network", None), "basename", None)
        if base is not None:
            return base.name
        if model:
            return os.path.splitext(os.path.basename(str(model)))[0]
        return "network"
    return player.evaluator.name


def run(args: Any, inp: Optional[TextIO] = None, out: Optional[TextIO] = None,
        player_factory: Optional[Callable[..., Player]] = None) -> int:
    """``gomoku play``: build the session from the options and run the UI until quit. Without
    ``player_factory`` the engine is :class:`gomoku_ai.shipped.PlayerFactory` (``--model``, or the
    shipped model for the rule and board size)."""
    inp = sys.stdin if inp is None else inp
    out = sys.stdout if out is None else out
    if getattr(args, "list_models", False):
        from gomoku_ai.shipped import format_models
        print(format_models(), file=out)
        return 0
    no_color = bool(getattr(args, "no_color", False))
    interactive = (inp is sys.stdin and out is sys.stdout and inp.isatty() and out.isatty())
    console = Console(file=out if not interactive else None, no_color=no_color or None,
                      highlight=False)
    try:
        w, h = parse_size(args.size)
        rule = Rule.parse(args.rule)
    except ValueError as e:
        console.print(f"gomoku play: {e}", markup=False)
        return 2
    humans = {"black": {BLACK}, "white": {WHITE}, "none": set(),
              "both": {BLACK, WHITE}}[getattr(args, "color", "black") or "black"]
    model = getattr(args, "model", None)
    if player_factory is None:
        from gomoku_ai.shipped import ModelNotFoundError, PlayerFactory, model_choice
        if model is not None:
            try:
                model_choice(model)
            except ModelNotFoundError as e:
                console.print(f"gomoku play: --model: {e}", markup=False)
                return 2
        player_factory = PlayerFactory(model)
    try:
        session = GameSession(w, h, rule, humans, getattr(args, "max_moves", None))
    except (ValueError, BoardSizeError) as e:
        console.print(f"gomoku play: {e}", markup=False)
        return 2
    load = getattr(args, "load", None)
    limit = build_limit(getattr(args, "time", 2.0), getattr(args, "visits", None))
    ui = TerminalUI(session, player_factory, limit, console, None, no_color=no_color,
                    export_svg=getattr(args, "export_svg", None),
                    watch_delay_s=0.4 if interactive else 0.0, model=model)
    ui.reader = PromptReader(ui) if interactive else PlainReader(inp, console)
    if load:
        ui.cmd_load([load])
        if ui.session.source is None:  # the load failed: say why and stop
            console.print(ui.view.messages[-1][1], markup=False)
            return 2
    return ui.run()
