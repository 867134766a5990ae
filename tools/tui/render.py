"""Drawing the game with rich: the board, the side panel and the whole screen ("frame").

Everything here is a pure function of a :class:`View` (what to show) returning rich renderables,
so the same code draws the terminal, the tests' recording console and the ``--export-svg`` image.

The board uses two characters per square: a separator column between squares carries the markers,
``[X]`` for the last move, ``>X<`` for the cursor and ``*X*`` for the winning line in plain mode,
so the board reads the same without colour (``NO_COLOR``, ``--no-color``, a file or a pipe).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

import numpy as np
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from gomoku_ai import movegen
from gomoku_ai.board import Board
from gomoku_ai.rules import BLACK, EMPTY, WALL, WHITE, Termination, opponent

from ..textwrap_items import pack
from .session import COLOR_NAME, Analysis, GameSession, column_name

# ---------------------------------------------------------------------------- themes
WOOD = "#dcb35c"


@dataclass(frozen=True)
class Theme:
    """Glyphs and styles; ``color=False`` gives the plain X/O board."""

    color: bool = True
    black: str = "●"
    white: str = "●"
    empty: str = "·"
    forbidden: str = "×"
    wall: str = "#"
    heat: str = "·░▒▓█"   # plain mode: glyph by heat level (0 = none)

    @classmethod
    def plain(cls) -> "Theme":
        return cls(color=False, black="X", white="O", empty=".")

    @classmethod
    def for_console(cls, console: Console, no_color: bool = False) -> "Theme":
        if no_color or console.no_color or console.color_system is None:
            return cls.plain()
        return cls()

    def stone_mark(self, color: int) -> str:
        """How a colour is named in text: ``● Black`` or ``X (black)``."""
        if self.color:
            return "●" if color == BLACK else "○"
        return "X" if color == BLACK else "O"

    def stone_style(self, color: int) -> str:
        if not self.color:
            return "bold"
        return "bold black on " + WOOD if color == BLACK else "bold bright_white on " + WOOD


HEAT_COLORS = ["#ffd787", "#ffaf5f", "#ff875f", "#e0482a", "#c01818"]  # level 1..5 backgrounds
MARKERS = {  # kind: (open, close, colour style, priority)
    "cursor": (">", "<", "bold blue", 3),
    "last": ("[", "]", "bold red", 2),
    "win": ("*", "*", "bold green", 1),
}


@dataclass
class Thinking:
    """The engine's live progress (filled from Player.think's on_info)."""

    purpose: str = "move"          # "move", "hint" or "analysis"
    color: int = BLACK
    elapsed_ms: float = 0.0
    limit_ms: Optional[float] = None
    limit_visits: Optional[int] = None
    visits: int = 0
    nodes_per_s: float = 0.0
    move: Optional[int] = None
    winrate: Optional[float] = None  # for the side to move
    pv: List[int] = field(default_factory=list)
    source: str = ""
    started: float = field(default_factory=time.perf_counter)
    stopping: bool = False


@dataclass
class View:
    """Everything a frame shows besides the session itself."""

    session: GameSession
    theme: Theme = field(default_factory=Theme)
    cursor: Optional[int] = None
    overlay: bool = False
    thinking: Optional[Thinking] = None
    messages: List[Tuple[str, str]] = field(default_factory=list)  # (kind, text)
    engine: str = ""
    show_help: bool = False
    live_analysis: Optional[Analysis] = None  # while thinking, for the overlay
    footer: str = ""


# ---------------------------------------------------------------------------- the board
def _heat_level(v: float) -> int:
    """0 (nothing) .. 5 (the most visited)."""
    if v < 0.08:
        return 0
    return int(min(5, max(1, np.ceil(v * 5.0))))


class _Squares:
    """What each square of the board shows, for :func:`board_text`: the stone, wall, principal-variation
    digit, forbidden mark, heat or empty point, and the marker around it (cursor, last move, winning line)."""

    def __init__(self, view: View) -> None:
        s = view.session
        self.view = view
        self.board = b = s.board
        self.theme = view.theme
        self.bg = f" on {WOOD}" if self.theme.color else ""
        outcome = s.outcome()
        self.win: Set[int] = set(outcome.line) if outcome is not None else set()
        self.last = b.last_move
        self.forbidden: Set[int] = set() if s.is_over() else set(movegen.forbidden_points(b))
        self.heat: Optional[np.ndarray] = None
        self.pv: Dict[int, Tuple[int, int]] = {}   # square -> (its number in the PV, the colour playing it)
        analysis = current_analysis(view) if view.overlay else None
        if analysis is not None:
            if analysis.heat is not None and analysis.heat.size == b.size:
                mx = float(analysis.heat.max()) if analysis.heat.size else 0.0
                self.heat = analysis.heat / mx if mx > 0 else None
            color = s.side
            for i, m in enumerate(analysis.pv[:9]):
                if 0 <= m < b.size and b[m] == EMPTY and m not in self.pv:
                    self.pv[m] = (i + 1, color)
                color = opponent(color)

    def marker(self, m: int) -> Optional[str]:
        """The :data:`MARKERS` kind around square ``m``, if any."""
        if self.view.cursor == m:
            return "cursor"
        if m == self.last and m not in self.win:
            return "last"
        if m in self.win and not self.theme.color:
            return "win"
        if m == self.last:
            return "last"
        return None

    def separator(self, left: Optional[str], right: Optional[str]) -> Tuple[str, str]:
        """(character, style) between two squares with the markers ``left`` and ``right``: the marker of
        higher priority closes the left square or opens the right one."""
        th = self.theme
        sep, style = " ", "dim" + self.bg if th.color else ""
        cand = []
        if right:
            cand.append((MARKERS[right][3], MARKERS[right][0], MARKERS[right][2]))
        if left:
            cand.append((MARKERS[left][3], MARKERS[left][1], MARKERS[left][2]))
        if cand:
            _, sep, st = max(cand)
            style = st + self.bg if th.color else "bold"
        return sep, style

    def square(self, m: int) -> Tuple[str, str]:
        """(glyph, style) of square ``m``."""
        th, bg = self.theme, self.bg
        c = self.board[m]
        if c == BLACK or c == WHITE:
            st = th.stone_style(c)
            if m in self.win and th.color:
                st = st.split(" on ")[0] + " on #3cb371"
            return th.black if c == BLACK else th.white, st
        if c == WALL:
            return th.wall, "bold" + bg
        if m in self.pv:
            num, col = self.pv[m]
            if th.color:  # on the wood like a stone, so white digits stay readable
                fg = "black" if col == BLACK else "bright_white"
                return str(num), f"bold {fg} on {WOOD}"
            return str(num), "bold"
        if m in self.forbidden:
            return th.forbidden, "bold red" + bg if th.color else ""
        if self.heat is not None and _heat_level(float(self.heat[m])) > 0:
            lvl = _heat_level(float(self.heat[m]))
            if th.color:
                return th.empty, f"black on {HEAT_COLORS[lvl - 1]}"
            return th.heat[min(lvl, 4)], ""
        return th.empty, ("#8a6a30" + bg) if th.color else ""


def board_text(view: View) -> List[Text]:
    """The board as lines of Text: column letters above and below, row numbers on both sides."""
    b = view.session.board
    w, h = b.width, b.height
    lw = len(str(h))
    squares = _Squares(view)
    header = Text(" " * (lw + 1))
    for x in range(w):
        header.append(column_name(x), "bold")
        header.append(" ")
    lines = [header]
    for y in range(h):
        line = Text(f"{y + 1:>{lw}}", "bold")
        marks = [squares.marker(y * w + x) for x in range(w)]
        for x in range(w + 1):
            line.append(*squares.separator(marks[x - 1] if x > 0 else None, marks[x] if x < w else None))
            if x == w:
                break
            line.append(*squares.square(y * w + x))
        line.append(f"{y + 1:<{lw}}", "bold")
        lines.append(line)
    lines.append(header.copy())
    for ln in lines:
        ln.no_wrap = True
        ln.overflow = "crop"
    return lines


def board_width(session: GameSession) -> int:
    return 2 * session.board.width + 1 + 2 * len(str(session.board.height))


def current_analysis(view: View) -> Optional[Analysis]:
    """The analysis of the position on the board: live (while thinking), cached, or None."""
    s = view.session
    if view.live_analysis is not None and view.live_analysis.key == s.key():
        return view.live_analysis
    return s.analyses.get(s.key())


# ---------------------------------------------------------------------------- the panel
def _bar(view: View, black_wr: float, width: int) -> Text:
    th = view.theme
    nb = int(round(black_wr * width))
    t = Text()
    t.append(th.stone_mark(BLACK) + " ", "bold")
    if th.color:  # on the board's wood, so that both halves show on dark and light terminals
        t.append(" ", "on " + WOOD)
        t.append("█" * nb, "black on " + WOOD)
        t.append("█" * (width - nb), "bright_white on " + WOOD)
        t.append(" ", "on " + WOOD)
    else:
        t.append("#" * nb)
        t.append("-" * (width - nb))
    t.append(" " + th.stone_mark(WHITE), "bold")
    t.append(f" {black_wr:4.0%}", "bold")
    return t


def _names(board: Board, moves: Sequence[int]) -> str:
    return " ".join(board.move_name(m) for m in moves)


def result_text(session: GameSession) -> Optional[str]:
    o = session.outcome()
    n = session.ply
    if o is None:
        if session.move_limit_reached():
            return f"Stopped at the move limit after {n} moves"
        return None
    if o.winner is None:
        return f"Draw (board full) after {n} moves"
    why = {Termination.FIVE: "five in a row", Termination.RESIGNATION: "resignation",
           Termination.FORBIDDEN: "forbidden move"}.get(o.termination, o.termination.value)
    who = COLOR_NAME[o.winner]
    return f"{who} wins by {why} after {n} moves"


def thinking_lines(view: View, width: int) -> List[Tuple[int, Text]]:
    """The engine's progress: elapsed/limit with a bar, visits, speed, best move and win rate (shorter
    words below :data:`PANEL_WIDTH` characters)."""
    tk = view.thinking
    th = view.theme
    b = view.session.board
    out: List[Tuple[int, Text]] = []
    if tk is None:
        return out
    compact = width < PANEL_WIDTH
    what = {"move": "Thinking" if compact else "Engine thinking",
            "hint": "Hint" if compact else "Looking for a hint", "analysis": "Analysing"}[tk.purpose]
    t = Text(f"{what}… ", "bold yellow" if th.color else "bold")
    if tk.limit_ms:
        frac = min(1.0, tk.elapsed_ms / tk.limit_ms)
        t.append(f"{tk.elapsed_ms / 1000:.1f}/{tk.limit_ms / 1000:.1f} s")
    elif tk.limit_visits:
        frac = min(1.0, tk.visits / tk.limit_visits)
        t.append(f"{tk.elapsed_ms / 1000:.1f} s")
    else:
        frac = 0.0
        t.append(f"{tk.elapsed_ms / 1000:.1f} s")
    out.append((0, t))
    pw = max(6, min(30, width - 2))
    done = int(frac * pw)
    bar = Text("━" * done, "yellow" if th.color else "") + Text("─" * (pw - done), "dim")
    out.append((1, bar))
    vis = f"{tk.visits:,} visits" + (f"/{tk.limit_visits:,}" if tk.limit_visits else "")
    if compact:
        out.append((1, Text(vis)))
        out.append((3, Text(f"{tk.nodes_per_s:,.0f} nodes/s")))
    else:
        out.append((1, Text(f"{vis} · {tk.nodes_per_s:,.0f} nodes/s")))
    if tk.move is not None:
        best = Text(f"{'Best' if compact else 'Best so far'}: {b.move_name(tk.move)}")
        if tk.winrate is not None:
            best.append(f" · {COLOR_NAME[tk.color]} {tk.winrate:.0%}")
        out.append((1, best))
    if compact:
        stop_text = "Ctrl-C: play it now" if tk.purpose == "move" else "Ctrl-C: stop"
    else:
        stop_text = "Ctrl-C: play the best move now" if tk.purpose == "move" else "Ctrl-C: stop"
    out.append((2, Text("stopping…" if tk.stopping else stop_text, "dim")))
    return out


#: the side panel's width (characters) from which it shows everything on full-length lines
PANEL_WIDTH = 30
#: the narrowest side panel (compact lines) that still beats the panel below a short terminal's board
NARROW_PANEL_WIDTH = 20
#: the lines the panel below the board gets when the height is not known, and the fewest it gets
BELOW_LINES, BELOW_MIN_LINES = 8, 3
FOOTER = "footer"  # the tag of the footer's lines (the move list goes above them)


class _Lines:
    """The panel's lines before fitting, each with a priority (lower is kept first when space runs out)
    and a tag (:data:`FOOTER` for the footer's)."""

    def __init__(self) -> None:
        self.items: List[Tuple[int, Text, str]] = []

    def add(self, prio: int, text: Union[str, Text], style: str = "", tag: str = "") -> None:
        """One line, cut with an ellipsis when too long."""
        t = text if isinstance(text, Text) else Text(text, style)
        t.no_wrap = True
        t.overflow = "ellipsis"
        self.items.append((prio, t, tag))

    def add_wrapped(self, prio: int, t: Text, tag: str = "") -> None:
        """A text wrapped over as many lines as it needs."""
        t.no_wrap = False
        self.items.append((prio, t, tag))


def panel_lines(view: View, width: int, max_lines: int) -> List[Text]:
    """The side panel: game, status, evaluation, engine progress and messages, then the move list in what
    room is left; at most ``max_lines`` lines of ``width`` characters (below :data:`PANEL_WIDTH`, the
    compact forms of the lines)."""
    out = _Lines()
    compact = width < PANEL_WIDTH
    _status_lines(view, out, compact)
    _eval_lines(view, width, out)
    if view.thinking is not None:
        out.add(0, "")
        for prio, t in thinking_lines(view, width):
            out.add(prio, t)
    else:
        _message_lines(view, out, compact)
    fitted = _fit(out.items, width, max_lines)
    result = [t for t, _ in fitted]
    room = max_lines - len(result) - 1
    s = view.session
    if room >= 1 and s.board.moves and view.thinking is None:
        block = move_list(s, width, room, view.theme)
        at = len(result)
        while at > 0 and fitted[at - 1][1] == FOOTER:
            at -= 1
        result[at:at] = [Text("")] + block if at > 0 else block
    return result


def _status_lines(view: View, out: _Lines, compact: bool = False) -> None:
    """The game (rule, size), who plays which colour, the result or who is to move, the last move, the
    engine; ``compact``: shorter forms for a narrow panel (the players on two lines)."""
    s = view.session
    b = s.board
    th = view.theme
    review = " · review" if s.review else ""
    if compact:
        out.add(0, Text(f"{b.rule.value} {b.width}×{b.height}{review}", "bold"))
    else:
        out.add(0, Text.assemble(("Gomoku", "bold"),
                                 f" · {b.rule.value} · {b.width}×{b.height}{review}"))
    players = Text()
    for c in (BLACK, WHITE):
        players.append(f"{th.stone_mark(c)} {COLOR_NAME[c]}: ", "bold")
        players.append(s.player_label(c))
        if c == BLACK and compact:
            out.add(1, players)
            players = Text()
        elif c == BLACK:
            players.append("   ")
    out.add(1, players)
    res = result_text(s)
    if res:
        out.add_wrapped(0, Text(res, "bold green" if th.color else "bold"))
    else:
        t = Text("" if compact else f"Move {s.ply + 1} · ")  # compact: the prompt has the number
        t.append(f"{th.stone_mark(s.side)} {COLOR_NAME[s.side]} to move", "bold")
        who = s.player_label(s.side)
        if not s.review and not compact:  # compact: the players' lines just above say who
            t.append(f" ({who})")
        if compact:
            out.add_wrapped(0, t)
        else:
            out.add(0, t)
    if b.last_move is not None:
        x, y = b.xy(b.last_move)
        at = "" if compact else f" ({x},{y})"
        out.add(2, f"Last: {th.stone_mark(opponent(s.side))} {b.move_name(b.last_move)}{at}"
                + (f"   ply {s.ply}/{s.total_plies()}" if s.future or s.review else ""))
    elif s.future:
        out.add(2, f"Start position   ply 0/{s.total_plies()}")
    if view.engine:
        out.add(3, f"Engine: {view.engine}", "dim")


def _eval_lines(view: View, width: int, out: _Lines) -> None:
    """Black's win chance as a bar (this position's analysis, else the engine's last), and with the overlay
    on the principal variation and the top moves."""
    s = view.session
    b = s.board
    analysis = current_analysis(view)
    bar_w = max(6, min(20, width - 12))
    wr = None
    if analysis is not None and analysis.black_winrate is not None:
        wr = analysis.black_winrate
        label = "Eval"
    elif s.last_eval is not None:
        wr = s.last_eval[1]
        label = "Engine's last eval"
    if wr is not None:
        out.add(4, "")
        if width < PANEL_WIDTH:
            label = "Black's win chance" if label == "Eval" else "Last eval, Black"
        else:
            label += ": Black's win chance"
        out.add(4, Text(label, "dim"))
        out.add(2, _bar(view, wr, bar_w))
    if view.overlay:
        if analysis is not None and analysis.pv:
            out.add(3, f"PV: {_names(b, analysis.pv[:8])}" + (" …" if len(analysis.pv) > 8 else ""))
        if analysis is not None and analysis.top:
            parts = []
            for m, share, w in analysis.top[:4]:
                parts.append(f"{b.move_name(m)} {share:.0%}")
            src = "visits" if analysis.source == "search" else analysis.source
            out.add(3, f"Top ({src}): " + " ".join(parts))
        elif analysis is None:
            out.add(3, Text("Overlay on: 'hint' searches this position", "dim"))


def _message_lines(view: View, out: _Lines, compact: bool = False) -> None:
    """The last three messages (the newest kept longest) and the footer of commands (wrapped in a
    ``compact`` panel)."""
    th = view.theme
    if view.messages:
        out.add(1, "")
    recent = view.messages[-3:]
    for k, (kind, msg) in enumerate(recent):
        style = {"error": "bold red", "ok": "green", "info": ""}.get(kind, "")
        if not th.color:
            style = "bold" if kind == "error" else ""
        prefix = "! " if kind == "error" else ""
        out.add_wrapped(1 if k == len(recent) - 1 else 4, Text(prefix + msg, style))
    if view.footer:
        out.add(5, "", tag=FOOTER)
        if compact:
            out.add_wrapped(2, Text(view.footer, "dim"), tag=FOOTER)
        else:
            out.add(2, Text(view.footer, "dim"), tag=FOOTER)


def _fit(items: List[Tuple[int, Text, str]], width: int, max_lines: int) -> List[Tuple[Text, str]]:
    """Wrap the long texts, then drop the lowest-priority lines (the last of them first) until at most
    ``max_lines`` are left; priority-0 lines are never dropped. Returns (line, tag) pairs."""
    lines: List[Tuple[int, Text, str]] = []
    for prio, t, tag in items:
        if not t.no_wrap:
            for part in t.wrap(Console(width=max(10, width)), max(10, width)):
                part.no_wrap = True
                lines.append((prio, part, tag))
        else:
            lines.append((prio, t, tag))
    while len(lines) > max_lines:
        worst = max(p for p, _, _ in lines)
        if worst == 0:
            break
        del lines[max(i for i, (p, _, _) in enumerate(lines) if p == worst)]
    return [(t, tag) for _, t, tag in lines[:max(1, max_lines)]]


def move_list(session: GameSession, width: int, max_lines: int, theme: Theme) -> List[Text]:
    """The most recent moves as ``12. h8 i9`` pairs, as many lines as fit (the newest last)."""
    b = session.board
    pairs = []
    for k in range(0, len(b.moves), 2):
        two = " ".join(b.move_name(m) for m in b.moves[k:k + 2])
        pairs.append(f"{k // 2 + 1}. {two}")
    lines = pack(pairs, width, sep="   ")
    head = "Moves" + (f" (last {max_lines - 1} lines)" if len(lines) > max_lines - 1 else "") + ":"
    shown = lines[-(max_lines - 1):] if max_lines > 1 else []
    out = [Text(head, "dim")] + [Text(ln, "dim" if theme.color else "") for ln in shown]
    for t in out:
        t.no_wrap = True
        t.overflow = "crop"
    return out if shown else []


# ---------------------------------------------------------------------------- help
HELP_COORDS = ("Squares: a column letter (a = left) and a row number counted from the TOP: "
               "h8 is x 7, y 7 in the protocol's 0-based x,y, and typing 7,7 works too.")


def help_renderable(view: View, commands: Sequence[Tuple[str, str]], width: int) -> RenderableType:
    """The command list in two columns (fits 80x24), the coordinates and the keys."""
    th = view.theme
    cmd_style = "bold cyan" if th.color else "bold"
    table = Table.grid(padding=(0, 1))
    cols = 2 if width >= 76 else 1
    for _ in range(cols):
        table.add_column(style=cmd_style, no_wrap=True)
        table.add_column(no_wrap=True)
    rows = list(commands)
    per = (len(rows) + cols - 1) // cols
    for i in range(per):
        cells: List[str] = []
        for c in range(cols):
            k = c * per + i
            cmd, text = rows[k] if k < len(rows) else ("", "")
            cells += [cmd, text + ("  " if c < cols - 1 else "")]
        table.add_row(*cells)
    keys = ("Keys: arrows on an empty line move a cursor, Enter plays it · Tab completes · "
            "Ctrl-P/N recall lines · Ctrl-C makes the engine move now (pauses watching) · "
            "Ctrl-D quits")
    return Group(Text("Gomoku help", "bold"), Text(HELP_COORDS), Text(""), table, Text(""),
                 Text(keys, "dim"), Text("Press Enter to go back to the board.", "dim"))


# ---------------------------------------------------------------------------- the frame
def frame(view: View, width: int, height: Optional[int] = None,
          commands: Sequence[Tuple[str, str]] = ()) -> RenderableType:
    """The whole screen for ``width`` x ``height`` characters (``height`` None: no limit), leaving one
    line for the prompt: the board with the panel beside it, or below it when narrow. A short terminal
    (the panel below would get fewer than :data:`BELOW_LINES` lines) keeps a narrow panel beside the
    board, and where even that does not fit the board loses its bottom letters first: the column letters
    at the top stay on the screen."""
    if view.show_help:
        return help_renderable(view, commands, width)
    lines = board_text(view)
    bw = board_width(view.session)
    pw = width - bw - 2
    below = BELOW_LINES if height is None else height - 2 - len(lines)
    if pw >= PANEL_WIDTH or (pw >= NARROW_PANEL_WIDTH and below < BELOW_LINES):
        if height is not None and len(lines) > height - 1:
            lines = lines[:-1]
        panel = panel_lines(view, pw, max(len(lines), (height or 0) - 2))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, width=bw)
        grid.add_column(no_wrap=True, width=pw)
        grid.add_row(Group(*lines), Group(*panel))
        return grid
    room = max(BELOW_MIN_LINES, below)
    if height is not None and len(lines) + room > height - 1:
        lines = lines[:-1]
        room = max(BELOW_MIN_LINES, height - 1 - len(lines))
    panel = panel_lines(view, max(20, width), room)
    return Group(*lines, *panel)
