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
from typing import Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from gomoku_ai import movegen
from gomoku_ai.rules import BLACK, EMPTY, WALL, WHITE, Termination

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


def board_text(view: View) -> List[Text]:
    """The board as lines of Text: column letters above and below, row numbers on both sides."""
    s = view.session
    b = s.board
    th = view.theme
    w, h = b.width, b.height
    bg = f" on {WOOD}" if th.color else ""
    lw = len(str(h))

    outcome = s.outcome()
    win: Set[int] = set(outcome.line) if outcome is not None else set()
    last = b.last_move
    forbidden: Set[int] = set()
    if not s.is_over():
        forbidden = set(movegen.forbidden_points(b))

    heat = None
    pv: Dict[int, Tuple[int, int]] = {}
    analysis = current_analysis(view) if view.overlay else None
    if analysis is not None:
        if analysis.heat is not None and analysis.heat.size == b.size:
            mx = float(analysis.heat.max()) if analysis.heat.size else 0.0
            heat = analysis.heat / mx if mx > 0 else None
        color = s.side
        for i, m in enumerate(analysis.pv[:9]):
            if 0 <= m < b.size and b[m] == EMPTY and m not in pv:
                pv[m] = (i + 1, color)
            color = 3 - color

    def marker(m: int) -> Optional[str]:
        if view.cursor == m:
            return "cursor"
        if m == last and m not in win:
            return "last"
        if m in win and not th.color:
            return "win"
        if m == last:
            return "last"
        return None

    header = Text(" " * (lw + 1))
    for x in range(w):
        header.append(column_name(x), "bold")
        header.append(" ")
    lines = [header]
    for y in range(h):
        line = Text(f"{y + 1:>{lw}}", "bold")
        marks = [marker(y * w + x) for x in range(w)]
        for x in range(w + 1):
            left = marks[x - 1] if x > 0 else None
            right = marks[x] if x < w else None
            sep, style = " ", "dim" + bg if th.color else ""
            cand = []
            if right:
                cand.append((MARKERS[right][3], MARKERS[right][0], MARKERS[right][2]))
            if left:
                cand.append((MARKERS[left][3], MARKERS[left][1], MARKERS[left][2]))
            if cand:
                _, sep, st = max(cand)
                style = st + bg if th.color else "bold"
            line.append(sep, style)
            if x == w:
                break
            m = y * w + x
            c = b[m]
            if c == BLACK or c == WHITE:
                glyph = th.black if c == BLACK else th.white
                st = th.stone_style(c)
                if m in win and th.color:
                    st = st.split(" on ")[0] + " on #3cb371"
                line.append(glyph, st)
            elif c == WALL:
                line.append(th.wall, "bold" + bg)
            elif m in pv:
                num, col = pv[m]
                if th.color:  # on the wood like a stone, so white digits stay readable
                    fg = "black" if col == BLACK else "bright_white"
                    line.append(str(num), f"bold {fg} on {WOOD}")
                else:
                    line.append(str(num), "bold")
            elif m in forbidden:
                line.append(th.forbidden, "bold red" + bg if th.color else "")
            elif heat is not None and _heat_level(float(heat[m])) > 0:
                lvl = _heat_level(float(heat[m]))
                if th.color:
                    line.append(th.empty, f"black on {HEAT_COLORS[lvl - 1]}")
                else:
                    line.append(th.heat[min(lvl, 4)], "")
            else:
                line.append(th.empty, ("#8a6a30" + bg) if th.color else "")
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


def _names(board, moves: Sequence[int]) -> str:
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
    """The engine's progress: elapsed/limit with a bar, visits, speed, best move and win rate."""
    tk = view.thinking
    th = view.theme
    b = view.session.board
    out: List[Tuple[int, Text]] = []
    if tk is None:
        return out
    what = {"move": "Engine thinking", "hint": "Looking for a hint",
            "analysis": "Analysing"}[tk.purpose]
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
    out.append((1, Text(f"{vis} · {tk.nodes_per_s:,.0f} nodes/s")))
    if tk.move is not None:
        best = Text(f"Best so far: {b.move_name(tk.move)}")
        if tk.winrate is not None:
            best.append(f" · {COLOR_NAME[tk.color]} {tk.winrate:.0%}")
        out.append((1, best))
    stop_text = "Ctrl-C: play the best move now" if tk.purpose == "move" else "Ctrl-C: stop"
    out.append((2, Text("stopping…" if tk.stopping else stop_text, "dim")))
    return out


def panel_lines(view: View, width: int, max_lines: int) -> List[Text]:
    """The side panel: game, status, evaluation, engine progress and messages."""
    s = view.session
    b = s.board
    th = view.theme
    out: List[Tuple[int, Text]] = []  # (priority: lower is kept first, line)

    def add(prio: int, text, style: str = "") -> None:
        t = text if isinstance(text, Text) else Text(text, style)
        t.no_wrap = True
        t.overflow = "ellipsis"
        out.append((prio, t))

    add(0, Text.assemble(("Gomoku", "bold"), f" · {b.rule.value} · {b.width}×{b.height}"
                         + (" · review" if s.review else "")))
    players = Text()
    for c in (BLACK, WHITE):
        players.append(f"{th.stone_mark(c)} {COLOR_NAME[c]}: ", "bold")
        players.append(s.player_label(c) + ("   " if c == BLACK else ""))
    add(1, players)
    res = result_text(s)
    if res:
        t = Text(res, "bold green" if th.color else "bold")
        t.no_wrap = False
        out.append((0, t))
    else:
        t = Text(f"Move {s.ply + 1} · ")
        t.append(f"{th.stone_mark(s.side)} {COLOR_NAME[s.side]} to move", "bold")
        who = s.player_label(s.side)
        if not s.review:
            t.append(f" ({who})")
        add(0, t)
    if b.last_move is not None:
        x, y = b.xy(b.last_move)
        add(2, f"Last: {th.stone_mark(3 - s.side)} {b.move_name(b.last_move)} ({x},{y})"
               + (f"   ply {s.ply}/{s.total_plies()}" if s.future or s.review else ""))
    elif s.future:
        add(2, f"Start position   ply 0/{s.total_plies()}")
    if view.engine:
        add(3, f"Engine: {view.engine}", "dim")

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
        add(4, "")
        add(4, Text(label + ": Black's win chance", "dim"))
        add(2, _bar(view, wr, bar_w))
    if view.overlay:
        if analysis is not None and analysis.pv:
            add(3, f"PV: {_names(b, analysis.pv[:8])}" + (" …" if len(analysis.pv) > 8 else ""))
        if analysis is not None and analysis.top:
            parts = []
            for m, share, w in analysis.top[:4]:
                parts.append(f"{b.move_name(m)} {share:.0%}")
            src = "visits" if analysis.source == "search" else analysis.source
            add(3, f"Top ({src}): " + " ".join(parts))
        elif analysis is None:
            add(3, Text("Overlay on: 'hint' searches this position", "dim"))

    tk = view.thinking
    if tk is not None:
        add(0, "")
        for prio, t in thinking_lines(view, width):
            add(prio, t)
    else:
        if view.messages:
            add(1, "")
        recent = view.messages[-3:]
        for k, (kind, msg) in enumerate(recent):
            style = {"error": "bold red", "ok": "green", "info": ""}.get(kind, "")
            if not th.color:
                style = "bold" if kind == "error" else ""
            prefix = "! " if kind == "error" else ""
            t = Text(prefix + msg, style)
            t.no_wrap = False
            out.append((1 if k == len(recent) - 1 else 4, t))
        if view.footer:
            add(5, "")
            add(2, Text(view.footer, "dim"))

    # wrap long messages, then drop low-priority lines until it fits
    lines: List[Tuple[int, Text]] = []
    for prio, t in out:
        if not t.no_wrap:
            for part in t.wrap(Console(width=max(10, width)), max(10, width)):
                part.no_wrap = True
                lines.append((prio, part))
        else:
            lines.append((prio, t))
    while len(lines) > max_lines:
        worst = max(p for p, _ in lines)
        if worst == 0:
            break
        del lines[max(i for i, (p, _) in enumerate(lines) if p == worst)]
    result = [t for _, t in lines[:max(1, max_lines)]]
    room = max_lines - len(result) - 1
    if room >= 1 and b.moves and tk is None:
        block = move_list(s, width, room, th)
        at = len(result) - (2 if view.footer and len(result) >= 2 else 0)
        result[at:at] = [Text("")] + block if at > 0 else block
    return result


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
    """The whole screen: the board with the panel beside it (or below it when narrow)."""
    if view.show_help:
        return help_renderable(view, commands, width)
    lines = board_text(view)
    bw = board_width(view.session)
    pw = width - bw - 2
    if pw >= 30:
        panel = panel_lines(view, pw, max(len(lines), (height or 0) - 2))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, width=bw)
        grid.add_column(no_wrap=True, width=pw)
        grid.add_row(Group(*lines), Group(*panel))
        return grid
    room = 8 if height is None else max(3, height - len(lines) - 2)
    panel = panel_lines(view, max(20, width), room)
    return Group(*lines, *panel)
