"""Where the games a player lost were decided, read from what the winner printed: for each game of a finished
tournament (its size and rule from ``tournament.json``) that ``--player`` lost, the first move on which the opponent announced a forced win (AIWine:
``VCT success``, ``VCF success``, ``val=100000``; Rapfi: ``Eval +M7``; kept by the runner as the move's
comment). On the position the opponent announced it in (opponent to move, after our move):

* ``found_s``: the first of ``--budgets`` (seconds, depth 5 then 6 then 8) at which our VCT finds the
  opponent's win (None: not found at the largest);

and on the position before our move, the player's root tactics at ``--ms`` as in a game:

* ``root``: ``threatened`` (the opponent had a VCF or a VCT as if we passed, found by the root; then
  ``restricted`` says how many moves the search was limited to, ``played_kept`` whether the losing move
  was one of them) or ``quiet`` (the root saw no threat);
* with ``--holding S``: ``near`` (our moves within distance 2 of a stone) and ``not_refuted`` (those after
  which the opponent's VCT at depth 5, 10,000 attacker nodes a move, found nothing; ``all_checked``
  False when the S seconds ran out first and the rest were counted unchecked). ``not_refuted`` 0 with
  every move checked: the game was already lost before this move, as far as depth-5 VCTs go;
  ``played_holds``: whether the losing move survives the player's first defence level (depth 3, 3,000
  attacker nodes) and a depth-5 check (10,000), as ``[d3, d5]`` (True: no VCT found after it).

Prints one line per game and a JSON summary; ``--out`` keeps every row.

    .venv/bin/python benchmarks/announced_wins.py runs/s12/aiwine-15 --player ours --out runs/t/aw.json

No oracle is needed: the opponent's own announcement marks the move, so this works for any opponent that
prints its search (AIWine does at every move; Rapfi only when asked for its messages).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gomoku_ai import movegen  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.fileio import atomic_write_text  # noqa: E402
from gomoku_ai.player import Player  # noqa: E402
from gomoku_ai.rules import Rule  # noqa: E402
from gomoku_ai.shipped import load_player  # noqa: E402
from gomoku_ai.vct import safe_moves, vct_search  # noqa: E402
from results_io import lost_by, read_results  # noqa: E402

ANNOUNCED = re.compile(r"VC[FT] success|val=100000\b|eval:100000\b|Eval? \+M\d+")
DEPTHS = (5, 6, 8)


def lost_games(folder: Path, player: str) -> List[Dict[str, Any]]:
    """The results.jsonl rows of ``folder`` that ``player`` lost."""
    return lost_by(read_results(folder), player)


def announcement(game: Dict[str, Any], player: str) -> Optional[int]:
    """The ply (0-based) of the opponent's first move whose comment announces a win, or None."""
    opp_black = game["black"] != player
    for ply_s, text in sorted(game.get("comments", {}).items(), key=lambda kv: int(kv[0])):
        ply = int(ply_s)
        if (ply % 2 == 0) == opp_black and ANNOUNCED.search(text or ""):
            return ply
    return None


def board_of(folder: Path) -> Board:
    """An empty board of the tournament's size and rule (its ``tournament.json``; 15x15 freestyle
    when there is none)."""
    meta_path = folder / "tournament.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    return Board(int(meta.get("width", 15)), int(meta.get("height", meta.get("width", 15))),
                 rule=Rule.parse(meta.get("rule", "freestyle")))


def analyse(game: Dict[str, Any], player: str, budgets: List[float], ms: float, p: Player,
            b: Board, holding_s: float = 0.0) -> Optional[Dict[str, Any]]:
    """The row of one lost ``game`` (see the module docstring); ``b`` an empty board of the
    tournament's size and rule (filled here); None when the opponent announced nothing."""
    ply = announcement(game, player)
    if ply is None or ply < 1:
        return None
    moves = [y * b.width + x for x, y in game["moves"]]
    for m in moves[:ply - 1]:
        b.play(m)
    played = moves[ply - 1]
    p.new_game()
    root = p.root_tactics(b, ms)
    if isinstance(root, tuple):
        restrict, threatened = root
        root_row: Dict[str, Any] = {"root": "threatened" if threatened else "quiet",
                                    "restricted": len(restrict) if restrict else None,
                                    "played_kept": (played in restrict) if restrict else None}
    else:
        root_row = {"root": f"our win ({root.source})"}
    if holding_s > 0:
        near = movegen.without_forbidden(b, movegen.near_empty(b, 2))
        res = safe_moves(b, near, max_depth=5, node_limit=10000, vcf_nodes=2000,
                         deadline=time.perf_counter() + holding_s)
        holds = [bool(safe_moves(b, [played], max_depth=depth, node_limit=nodes, vcf_nodes=2000).kept)
                 for depth, nodes in ((3, 3000), (5, 10000))]
        root_row.update(near=len(near), not_refuted=len(res.kept), all_checked=not res.aborted,
                        played_holds=holds)
    b.play(played)
    found: Optional[float] = None
    for depth, secs in zip(DEPTHS, budgets):
        vct = vct_search(b, max_depth=depth, node_limit=10 ** 7, deadline=time.perf_counter() + secs)
        if vct.line is not None:
            found = secs
            break
    return {"game": game["game"], "ply": ply, "played": b.move_name(played), "found_s": found, **root_row}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a finished tournament folder (results.jsonl)")
    ap.add_argument("--player", default="ours")
    ap.add_argument("--budgets", default="0.3,2,20", help="VCT seconds at depth 5, 6, 8 (comma list)")
    ap.add_argument("--ms", type=float, default=920.0, help="the player's soft budget for its root tactics (ms)")
    ap.add_argument("--holding", type=float, default=0.0, metavar="S",
                    help="also count our moves not refuted at depth 5 before the losing move, S seconds a game")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    budgets = [float(x) for x in a.budgets.split(",")][:len(DEPTHS)]
    empty = board_of(a.folder)
    p = load_player()
    rows, unannounced = [], 0
    try:
        for g in lost_games(a.folder, a.player):
            row = analyse(g, a.player, budgets, a.ms, p, empty.copy(), a.holding)
            if row is None:
                unannounced += 1
                continue
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        p.close()
    found = Counter(str(r["found_s"]) for r in rows)
    roots = Counter(r["root"] for r in rows)
    summary = {"folder": str(a.folder), "lost": len(rows) + unannounced, "announced": len(rows),
               "found_by_budget_s": dict(found), "root_before_the_move": dict(roots),
               "threatened_and_kept": sum(1 for r in rows if r.get("played_kept")), "budgets_s": budgets}
    if a.holding > 0:
        summary["every_move_refuted"] = sum(1 for r in rows if r["not_refuted"] == 0 and r["all_checked"])
        summary["not_refuted_median"] = sorted(r["not_refuted"] for r in rows)[len(rows) // 2] if rows else None
        summary["played_holds_d3_d5"] = [sum(1 for r in rows if r["played_holds"][i]) for i in (0, 1)]
    print(json.dumps(summary, indent=2))
    if a.out is not None:
        atomic_write_text(a.out, json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
