"""The live view of a running tournament on a terminal (rich): a standings table and a progress bar.

Used only when stdout is a terminal (and not ``--no-live``); otherwise the runner prints plain lines. Lines the
runner prints (finished games, warnings) go through :meth:`LiveDisplay.print` and scroll above the table.

Table columns: rank, name, Elo and its 95 % +/- (the Bradley-Terry fit of the summary, first-move term
included; ``-`` for a player who won or lost every game, whose rating is not estimable), LOS against the next
player in the ranking (from the rating covariance), games, W-D-L, score,
games left in the schedule, and failure counters (time losses, crashes, and other forfeits: protocol errors,
illegal and forbidden moves). Below it: the games progress bar (done / total, elapsed, remaining) and, for a
match, its W-D-L with the Elo estimates (or, for a perfect score, only the one-sided bound) and the SPRT state.
"""
from __future__ import annotations

import math
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from .results import perfect_text, wdl_text

if TYPE_CHECKING:
    from rich.console import JustifyMethod  # rich is imported lazily at run time


def _f(v: Optional[float], spec: str = ".1f") -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return format(round(v, 1) + 0.0, spec)  # + 0.0: no "-0.0"


def standings_table(s: Dict[str, Any], left: Sequence[int], title: Optional[str] = None) -> Any:
    """A rich Table of summary ``s`` (see :func:`tools.tournament.results.summarize`); ``left[i]``: games player
    ``i`` still has to play."""
    from rich.table import Table
    rt = s["rating"]
    n = len(s["players"])
    order = list(range(n))
    has_elo = "elo" in rt
    if has_elo:
        order.sort(key=lambda i: -rt["elo"][i])
    t = Table(title=title, title_justify="left", expand=False, pad_edge=False)
    columns: Tuple[Tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("Player", "left"), ("Elo", "right"), ("±95%", "right"),
        ("LOS↓", "right"), ("Games", "right"), ("W-D-L", "right"), ("Score", "right"),
        ("Left", "right"), ("Time", "right"), ("Crash", "right"), ("Other", "right"))
    for col, just in columns:
        t.add_column(col, justify=just, no_wrap=True)
    perfect = rt.get("perfect") or [None] * n
    for rank, i in enumerate(order, 1):
        p = s["players"][i]
        los = "-"
        if has_elo and rank < n and rt.get("los") and not perfect[i] and not perfect[order[rank]]:
            v = rt["los"][i][order[rank]]
            los = "-" if v is None else f"{100 * v:.1f}%"
        f = p["failures"]
        other = f["protocol"] + f["illegal"] + f["forbidden"]
        t.add_row(str(rank), p["name"],
                  _f(rt["elo"][i], "+.1f") if has_elo and not perfect[i] else "-",
                  _f(rt["err"][i]) if "err" in rt and not perfect[i] else "-", los, str(p["games"]),
                  f"{p['w']}-{p['d']}-{p['l']}",
                  f"{100 * p['score']:.1f}%" if p["score"] is not None else "-",
                  str(left[i]) if i < len(left) else "-",
                  str(f["time"]) if f["time"] else "·", str(f["crash"]) if f["crash"] else "·",
                  str(other) if other else "·")
    return t


def _estimate_text(ps: Dict[str, Any]) -> str:
    """Elo ± 95 % and LOS of a pairing (trinomial), and the pentanomial estimate over its complete pairs."""
    t = ps["trinomial"]
    line = f"Elo {t['elo']:+.1f} ± {_f(t['elo_err']) if t.get('se') else '-'}, LOS {100 * t['los']:.1f}%"
    if ps["pairs"]:
        p = ps["pentanomial"]
        line += f"; penta {ps['penta']} Elo {p['elo']:+.1f} ± {_f(p['elo_err']) if p.get('se') else '-'}"
    return line


def footer_lines(s: Dict[str, Any]) -> List[str]:
    """First-move advantage; for a match the pairing's statistics and the SPRT state."""
    out: List[str] = []
    rt = s["rating"]
    if "first_move_elo" in rt:
        out.append(f"first move (Black) {rt['first_move_elo']:+.1f} ± {rt['first_move_err']:.1f} Elo; "
                   f"LOS↓: against the next player in the ranking")
    if s["format"] == "match" and s["pairings"] and s["pairings"][0]["games"]:
        ps = s["pairings"][0]
        t = ps["trinomial"]
        line = f"{wdl_text(ps)} [{t['score']:.3f}], "
        if ps.get("perfect_bound") is not None:
            out.append(line + perfect_text(ps, s["confidence"]) + (f"; penta {ps['penta']}" if ps["pairs"] else ""))
        else:
            out.append(line + _estimate_text(ps))
    if any(rt.get("perfect") or ()):
        out.append("-: not estimable (a player who won or lost every game has no finite rating)")
    if "sprt" in s:
        sp = s["sprt"]
        out.append(f"SPRT [{sp['elo0']:g}, {sp['elo1']:g}] LLR {sp['llr']:.2f} ({100 * sp['fraction']:.0f}%) "
                   f"[{sp['lower']:.2f}, {sp['upper']:.2f}]" + (f" -> {sp['decision']}" if sp["decision"] else ""))
    return out


class LiveDisplay:
    """A rich Live region: the standings table, footer lines and a progress bar (a context manager)."""

    def __init__(self, total: int, done: int = 0, title: str = "", console: Any = None) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                   TimeRemainingColumn)
        self.console = console or Console()
        self.title = title
        self.progress = Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TextColumn("elapsed"),
                                 TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                                 console=self.console)
        self.task = self.progress.add_task("games", total=max(1, total), completed=done)
        self._body: Any = None
        self._lock = threading.Lock()
        self.live = Live(self._render(), console=self.console, refresh_per_second=2, transient=False,
                         redirect_stdout=False, redirect_stderr=False)

    def _render(self) -> Any:
        from rich.console import Group
        return Group(self._body, self.progress) if self._body is not None else self.progress

    def update(self, summary: Dict[str, Any], left: Sequence[int], done: int, total: int) -> None:
        from rich.console import Group
        from rich.text import Text
        parts: List[Any] = ([Text(self.title)] if self.title else []) + [standings_table(summary, left)]
        parts += [Text(x) for x in footer_lines(summary)]
        with self._lock:
            self._body = Group(*parts)
            self.progress.update(self.task, completed=done, total=max(1, total))
            self.live.update(self._render())

    def print(self, text: str) -> None:
        self.live.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def __enter__(self) -> "LiveDisplay":
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.update(self._render())
        self.live.__exit__(*exc)
