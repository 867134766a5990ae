"""The live progress display of ``gomoku train selfplay`` and ``gomoku train loop`` on a terminal (rich)."""
from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

__all__ = ["LiveDisplay"]


class LiveDisplay:
    """A rich progress display fed with the JSON records of ``selfplay`` / ``loop``: iterations,
    self-play games (positions/s), training steps (losses, samples/s), gate pairs (W/D/L, LLR),
    and a table of the last finished iterations. Use as a context manager; call with records."""

    def __init__(self, iterations: Optional[int] = None, games: Optional[int] = None,
                 steps: Optional[int] = None, console: Any = None) -> None:
        from rich.console import Console
        from rich.live import Live
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn)
        self.console = console or Console()
        self.steps = steps
        self.progress = Progress(TextColumn("{task.description:<18}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("{task.fields[info]}"), console=self.console)
        self.t_iter = (self.progress.add_task("iterations", total=iterations, info="")
                       if iterations else None)
        self.t_sp = self.progress.add_task("self-play games", total=games, info="")
        self.t_tr = self.progress.add_task("training steps", total=steps, info="",
                                           visible=steps is not None)
        self.t_gate = self.progress.add_task("gate pairs", total=None, info="", visible=False)
        self.rows: List[List[str]] = []
        self._sp_t0 = time.perf_counter()
        self._sp_pos = 0
        self._sp_games = 0
        self.live = Live(self._render(), console=self.console, refresh_per_second=4,
                         transient=False)

    def _render(self) -> Any:
        from rich import box
        from rich.console import Group
        from rich.table import Table
        if not self.rows:
            return self.progress
        t = Table(title="finished iterations (train and validation losses; gate, * = promoted)",
                  expand=False, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1),
                  pad_edge=False)
        for col in ("it", "games", "pos", "pos/s", "pol", "val", "v.pol", "v.val", "gate", "s"):
            t.add_column(col, justify="right", no_wrap=True)
        for r in self.rows[-8:]:
            t.add_row(*r)
        return Group(t, self.progress)

    def __enter__(self) -> "LiveDisplay":
        self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.live.update(self._render())
        self.live.__exit__(*exc)

    def __call__(self, rec: Dict[str, Any]) -> None:
        p = self.progress
        if "note" in rec:
            self.console.print(f"[yellow]{rec['note']}[/yellow]")
        elif rec.get("phase") == "selfplay":
            self._sp_t0, self._sp_pos, self._sp_games = time.perf_counter(), 0, 0
            p.reset(self.t_sp, total=rec.get("games"), description=f"it {rec['iteration']} "
                    "self-play", info="")
        elif rec.get("phase") == "train":
            p.reset(self.t_tr, total=self.steps, visible=True, info="",
                    description=f"it {rec['iteration']} training")
        elif rec.get("phase") == "gate":
            p.reset(self.t_gate, total=None, visible=True, info="",
                    description=f"it {rec['iteration']} gate")
        elif "selfplay_batch" in rec or "batch" in rec and "positions" in rec:
            b = rec.get("selfplay_batch", rec)
            self._sp_pos += int(b.get("positions", 0))
            self._sp_games += int(b.get("games", 0))
            dt = max(1e-9, time.perf_counter() - self._sp_t0)
            p.advance(self.t_sp, int(b.get("games", 0)))
            p.update(self.t_sp, info=f"{self._sp_pos} positions  {self._sp_pos / dt:.1f} pos/s  "
                                     f"{3600 * self._sp_games / dt:.0f} games/h")
        elif "train_log" in rec:
            m = rec["train_log"]
            if "policy_loss" in m:
                target = rec.get("train_target")
                done = m["step"] - (target - self.steps) if target and self.steps else m["step"]
                p.update(self.t_tr, completed=done,
                         info=f"policy {m['policy_loss']:.3f}  value {m['value_loss']:.3f}  "
                              f"{m.get('positions_per_s', 0):.0f} samples/s")
        elif "gate_pair" in rec:
            g = rec["gate_pair"]
            pen = g.get("penta", [])
            p.update(self.t_gate, completed=int(g["pair"]) + 1, total=rec.get("max_pairs"),
                     info=f"penta {pen}  LLR {g.get('llr')}")
        elif "elapsed_s" in rec and "iteration" in rec:      # an iteration's log line
            sp, tr, g = rec.get("selfplay") or {}, rec.get("train") or {}, rec.get("gate") or {}

            def f(x: Any, fmt: str = "{:.3f}") -> str:
                return "-" if x is None else fmt.format(x)

            gate = "-"
            short = {"accept": "acc", "reject": "rej", "inconclusive": "inc"}
            if g.get("elo") is not None:
                gate = f"{short.get(g['decision'], g['decision'])} {g['elo']:+.0f}"
            elif g.get("decision"):
                gate = "off" if "gating off" in str(g.get("reason", "")) else g["decision"]
            self.rows.append([str(rec["iteration"]), f(sp.get("games"), "{}"),
                              f(sp.get("positions"), "{}"), f(sp.get("positions_per_s"), "{:.1f}"),
                              f(tr.get("policy_loss")), f(tr.get("value_loss")),
                              f(tr.get("val_policy_loss")), f(tr.get("val_value_loss")),
                              gate + ("*" if rec.get("promoted") else ""),
                              f(rec.get("elapsed_s"), "{:.0f}")])
            if self.t_iter is not None:
                p.update(self.t_iter, completed=int(rec["iteration"]))
            p.update(self.t_gate, visible=False)
        elif "summary" in rec:
            s = rec["summary"]
            self.console.print(f"self-play: {s.get('games')} games, {s.get('positions')} positions"
                               f", {s.get('positions_per_s')} positions/s, "
                               f"{s.get('games_per_hour')} games/h")
        self.live.update(self._render())
