"""The terminal UI's main loop: input (prompt-toolkit), output (rich), the engine in a thread.

:class:`TerminalUI` takes its console, its line reader and its player from the caller, so tests drive
it with a pipe input and a recording console; :func:`run` builds the real ones for
``gomoku play``. It owns the loop (an engine move, a game-end offer or one line of input per step),
the output and the dispatch of a line to a move or a ``cmd_*`` handler; the handlers are its
mixins :class:`~tools.tui.handlers.GameCommands` and :class:`~tools.tui.review.ReviewCommands`, and
the engine's player and searches are its :class:`~tools.tui.engine.EngineSeat`.

Screen: the console is cleared and one frame (board + panel) is drawn before each prompt; while the
engine thinks, the frame is redrawn live (rich.Live) with its progress, and Ctrl-C (SIGINT) sets the
search's stop event, so the engine plays its best move so far and the program goes on.
"""
from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, List, Optional, TextIO, Tuple

from rich.console import Console, RenderableType

from gomoku_ai.board import BoardSizeError
from gomoku_ai.player import Limit, NoMoveError, Player, SearchInfo
from gomoku_ai.rules import BLACK, WHITE, Rule
from protocol.think import ThinkJob

from . import commands as C
from .engine import EngineSeat
from .handlers import GameCommands
from .render import Theme, Thinking, View, frame
from .review import ReviewCommands
from .session import COLOR_NAME, Analysis, GameSession, MoveError, build_limit, default_save_name, parse_size

if TYPE_CHECKING:  # prompt-toolkit is imported lazily at run time
    from prompt_toolkit import PromptSession
    from prompt_toolkit.input import Input
    from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
    from prompt_toolkit.output import Output


# ============================================================================ line readers
class TerminalResized(Exception):
    """The terminal changed size while a line was being typed: the caller draws the screen again and
    asks again, with ``text`` (what was typed so far) as the default."""

    def __init__(self, text: str) -> None:
        super().__init__("the terminal was resized")
        self.text = text


class _Resized(Exception):
    """The terminal changed size during a live display of the engine's search."""


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

    def __init__(self, ui: "TerminalUI", input: Optional[Input] = None, output: Optional[Output] = None) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import InMemoryHistory
        self.ui = ui
        self.session: PromptSession[str] = PromptSession(history=InMemoryHistory(), completer=C.make_completer(),
                                     complete_while_typing=False, key_bindings=self._bindings(),
                                     input=input, output=output)
        self._size: Any = None              # the terminal's size (rows, columns) as the prompt started
        self._typed: Optional[str] = None  # what was typed when a resize ended the prompt
        self.session.app.before_render += self._check_size

    def _check_size(self, app: Any) -> None:
        """prompt-toolkit redraws the prompt line on SIGWINCH (or its size poll); end the prompt then,
        so that the whole screen is drawn again for the new size."""
        if self._size is None or self._typed is not None or app.future is None or app.future.done():
            return
        if app.output.get_size() != self._size:
            self._typed = app.current_buffer.text
            app.exit(result="")

    def _bindings(self) -> KeyBindings:
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

        def mover(dx: int, dy: int) -> Callable[[KeyPressEvent], None]:
            def handler(event: KeyPressEvent) -> None:
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
        """One line; raises :class:`TerminalResized` when the terminal changes size meanwhile."""
        from prompt_toolkit.formatted_text import FormattedText
        self._size = self.session.app.output.get_size()
        self._typed = None
        try:
            line = self.session.prompt(FormattedText([("bold", message)]), default=default,
                                       placeholder=FormattedText([("fg:ansibrightblack", placeholder)]))
        finally:
            self._size = None
        if self._typed is not None:
            raise TerminalResized(self._typed)
        return line


# ============================================================================ the UI
class TerminalUI(GameCommands, ReviewCommands):
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
        self.engine = EngineSeat(player_factory, session, limit, model, engine_label)
        self.console = console
        self.theme = Theme.for_console(console, no_color)
        self.reader = reader
        self.export_svg = export_svg
        self.watch_delay_s = watch_delay_s
        self.save_dir = save_dir
        self.view = View(session, self.theme, engine=self._engine_text())
        self.log: List[Tuple[str, str]] = []  # every message shown, for tests and debugging
        self.quit = False
        self.paused = False
        self.offered_save = False
        self._ctrl_c = 0
        self._prefill = ""
        self.max_moves = session.max_moves

    @property
    def player(self) -> Player:
        """The engine's current Player (see :class:`~tools.tui.engine.EngineSeat`)."""
        return self.engine.player

    @property
    def limit(self) -> Limit:
        """The engine's per-move budget (``time`` and ``visits`` change it)."""
        return self.engine.limit

    @limit.setter
    def limit(self, limit: Limit) -> None:
        self.engine.limit = limit

    # ------------------------------------------------------------------ output
    def _engine_text(self) -> str:
        return self.engine.describe(self.session.rule)

    def say(self, text: str, kind: str = "info") -> None:
        self.log.append((kind, text))
        self.view.messages.append((kind, text))
        del self.view.messages[:-6]

    def frame(self, width: Optional[int] = None, height: Optional[int] = None) -> RenderableType:
        """The screen as a rich renderable, for ``width`` x ``height`` characters (default: the
        console's size; no height limit when the console is not a terminal)."""
        w = self.console.width if width is None else width
        h = height
        if h is None and self.console.is_terminal:
            h = self.console.height
        self.view.footer = self._footer()
        return frame(self.view, w, h, C.help_rows())

    def _sync_size(self) -> Tuple[int, int]:
        """Make the console follow the terminal's size (it may have been resized, and rich keeps
        COLUMNS/LINES as they were at the start); returns (columns, lines)."""
        if self.console.is_terminal:
            try:
                size = os.get_terminal_size(self.console.file.fileno())
            except (AttributeError, OSError, ValueError):  # not a real terminal (a test's stream)
                pass
            else:
                self.console.size = (size.columns, size.lines)
        return self.console.width, self.console.height

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
            self._sync_size()
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
        prompt, placeholder = self._prompt_text()
        default, self._prefill = self._prefill, ""
        try:
            line = self.reader.read(prompt, default=default, placeholder=placeholder)
        except TerminalResized as resized:  # the next step draws the screen for the new size
            self._prefill = resized.text
            return
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

    def _prompt_text(self) -> Tuple[str, str]:
        """The prompt and its placeholder (shown greyed on an empty line), saying what can be typed
        now: after the game's end no move; in review Enter steps forward while there is a next move."""
        s = self.session
        if s.is_over() and s.review:
            return "game over › ", "prev, first, goto N, new, load FILE or quit (help lists all)"
        if s.is_over():
            return "game over › ", "new, undo, save FILE or quit (help lists all)"
        mark = self.theme.stone_mark(s.side)
        prompt = f"{mark} {COLOR_NAME[s.side].lower()} {s.ply + 1}"
        if s.review and s.future:
            return (f"{prompt} · Enter = next › ",
                    "Enter = next; prev, first, last, goto N, or a move (a new line)")
        if s.review:
            return f"{prompt} › ", "the last move: prev, first, goto N, or a move to go on"
        return f"{prompt} › ", "a move (h8 or 7,7), or help"

    def offer_save(self) -> None:
        s = self.session
        from .render import result_text
        self.log.append(("ok", result_text(s) or "Game over"))  # the panel shows it already
        if not s.board.moves or s.source:
            return
        self.redraw()
        suggested = default_save_name(self.save_dir)
        default, self._prefill = self._prefill, ""
        try:
            ans = self.reader.read("Save this game? [y/N or a file name] ", default=default,
                                   placeholder="y saves as " + os.path.basename(suggested)).strip()
        except TerminalResized as resized:  # ask again on a screen drawn for the new size
            self._prefill = resized.text
            self.offered_save = False
            return
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
        dropped = s.play(m)
        self.view.cursor = None
        self._line_dropped(dropped)
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
                start = b.centre
            self.view.cursor = start
        else:
            x, y = b.xy(self.view.cursor)
            x = min(b.width - 1, max(0, x + dx))
            y = min(b.height - 1, max(0, y + dy))
            self.view.cursor = b.index(x, y)
        return b.move_name(self.view.cursor)

    # ------------------------------------------------------------------ the engine
    def _ensure_player(self) -> None:
        if self.engine.ensure(self.session):
            self.view.engine = self._engine_text()

    def think(self, purpose: str) -> Optional[SearchInfo]:
        """Search the position on the board (:meth:`EngineSeat.think <tools.tui.engine.EngineSeat.think>`),
        showing live progress; Ctrl-C makes the engine's best move so far come back. None (and a message)
        when the engine has no move."""
        self._ensure_player()
        try:
            return self.engine.think(self.session, self.view, purpose, self._wait)
        except NoMoveError as err:
            self.say(f"The engine has no move: {err}", "error")
            return None

    def _wait(self, job: ThinkJob, tk: Thinking) -> None:
        """Wait for the engine's search; on a terminal, redraw its progress live (rich.Live) meanwhile,
        starting the display again when the terminal changes size."""
        if not self.console.is_terminal:
            job.wait(poll_s=0.1)
            return
        while True:
            try:
                self._wait_live(job, tk)
                return
            except _Resized:
                continue

    def _wait_live(self, job: ThinkJob, tk: Thinking) -> None:
        """One live display of the search at the terminal's present size; raises :class:`_Resized`
        (the search goes on) when that size changes."""
        from rich.live import Live
        size = self._sync_size()
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
                if self._sync_size() != size:
                    raise _Resized
                now_ms = (time.perf_counter() - tk.started) * 1000.0
                tk.elapsed_ms = max(tk.elapsed_ms, now_ms)
                with self.engine.lock:
                    live.update(self._live_renderable(whole), refresh=True)
            job.wait(poll_s=0.1, on_poll=refresh)

    def _frame_height(self) -> int:
        return len(self.console.render_lines(self.frame(), self.console.options, pad=False))

    def _live_renderable(self, whole: bool) -> RenderableType:
        if whole:
            return self.frame()
        from rich.console import Group
        from .render import thinking_lines
        return Group(*[t for _, t in thinking_lines(self.view, min(60, self.console.width))])

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
        dropped = s.play(info.move, int(info.elapsed_ms))
        x, y = s.board.xy(info.move)
        extra = f", {info.visits:,} visits" if info.visits else f" ({info.source})"
        if self.engine.interrupted:
            extra += ", stopped early"
        self.view.messages[:] = [m for m in self.view.messages
                                 if not m[1].startswith("Engine played")]
        self.say(f"Engine played {s.board.move_name(info.move)} ({x},{y}) in "
                 f"{info.elapsed_ms / 1000:.1f} s{extra}.")
        self._line_dropped(dropped)
        if self.engine.interrupted and not s.humans:
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
        return self.engine.policy(self.session)


# ============================================================================ entry point
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
        player_factory = PlayerFactory(model, thread_num=int(getattr(args, "threads", 1) or 1))
    try:
        session = GameSession(w, h, rule, humans, getattr(args, "max_moves", None))
    except (ValueError, BoardSizeError) as e:
        console.print(f"gomoku play: {e}", markup=False)
        return 2
    svg = getattr(args, "export_svg", None)
    if svg and not os.path.isdir(os.path.dirname(os.path.abspath(svg))):
        console.print(f"gomoku play: --export-svg {svg}: the folder {os.path.dirname(os.path.abspath(svg))} "
                      "does not exist", markup=False)
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
