"""Where a player's games are lost early: for each game of a finished tournament in which ``--player`` had
``--colour``, an oracle engine (Rapfi: it prints ``Eval +M7`` for a mate) is asked about the position before
and after each of the player's first ``--moves`` moves after the opening. Prints one line per game and a JSON
summary; ``--out`` keeps every answer.

    .venv/bin/python benchmarks/early_losses.py runs/t/r100k --player ours --colour white \\
        --engine ~/sparring/rapfi/build/pbrain-rapfi --nodes 500000 --out runs/t/r100k-white.json

A game's verdict is ``lost before`` (the oracle calls the position before one of those moves lost for the
player: the opening, or an earlier move beyond the oracle's horizon), ``move lets a mate`` (after the move the
oracle, to move, announces a mate; ``oracle's own`` when that move was the oracle's choice too) or ``open``
(neither within those moves). ``eval_before_move_2`` is the oracle's evaluation, from the player's side, before
its second move (Rapfi's units: about 290 per tanh unit of the expected result, ``checkpoints/teacher15c``).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_vct_set import Oracle, mates  # noqa: E402
from results_io import read_results  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.fileio import atomic_write_text  # noqa: E402
from tools.tournament.config import read_config  # noqa: E402


def analyse(orc: Oracle, game: Dict[str, Any], player: str, moves_to_check: int) -> Dict[str, Any]:
    """The verdict on ``game`` (a results.jsonl row, 15x15) for ``player``, with the oracle's answers."""
    size = 15
    moves = [y * size + x for x, y in game["moves"]]
    black = game["black"] == player
    ours = [p for p in range(game["opening_plies"], len(moves)) if (p % 2 == 0) == black][:moves_to_check]
    steps: List[Dict[str, Any]] = []
    verdict = "open"
    for p in ours:
        b = Board(size)
        for m in moves[:p]:
            b.push(m)
        before, best = orc.ask(b)
        played = b.move_name(moves[p])
        b.push(moves[p])
        after, _ = orc.ask(b)
        steps.append({"ply": p, "played": played, "oracle": best, "eval_before": before, "eval_after": after})
        if mates(before) < 0:
            verdict = "lost before"
            break
        if mates(after) > 0:
            verdict = "move lets a mate" + (" (oracle's own)" if best == played else "")
            break
    return {"game": game["game"], "opening": game.get("opening"), "result": game["result"], "verdict": verdict,
            "steps": steps}


def summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    verdicts: Dict[str, int] = {}
    for r in rows:
        key = r["verdict"].replace(" (oracle's own)", "")
        verdicts[key] = verdicts.get(key, 0) + 1
    own = sum(1 for r in rows if r["verdict"].endswith("(oracle's own)"))
    evs = [int(r["steps"][1]["eval_before"]) for r in rows
           if len(r["steps"]) > 1 and "M" not in r["steps"][1]["eval_before"]]
    mate_plies = [int(r["steps"][-1]["eval_after"].lstrip("+M")) for r in rows
                  if r["verdict"].startswith("move lets a mate")]
    out: Dict[str, Any] = {"games": len(rows), "verdicts": verdicts, "oracle_own_move": own,
                           "mate_plies": sorted(mate_plies)}
    if evs:
        out["eval_before_move_2"] = {"median": statistics.median(evs), "n": len(evs),
                                     "share_at_most_-150": round(sum(e <= -150 for e in evs) / len(evs), 3)}
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tournament", help="a finished tournament folder (results.jsonl)")
    ap.add_argument("--player", required=True, help="the player's name in the tournament")
    ap.add_argument("--colour", choices=("black", "white"), default="white",
                    help="the games in which the player had this colour (default: %(default)s)")
    ap.add_argument("--engine", required=True, help="the oracle: a pbrain engine that prints Eval (Rapfi)")
    ap.add_argument("--nodes", type=int, default=500_000, help="oracle nodes a position (default: %(default)s)")
    ap.add_argument("--moves", type=int, default=4, help="the player's moves checked (default: %(default)s)")
    ap.add_argument("--out", default=None, help="write every answer here (JSON)")
    args = ap.parse_args(argv)
    folder = Path(args.tournament)
    conf = read_config(folder)
    if (conf.get("width"), conf.get("height")) != (15, 15):
        ap.error(f"{folder}: a {conf.get('width')}x{conf.get('height')} tournament; only 15x15 is analysed")
    games = read_results(folder)
    games = [g for g in games if g[args.colour] == args.player]
    orc = Oracle([args.engine], args.nodes, 15)
    rows = []
    try:
        for g in games:
            r = analyse(orc, g, args.player, args.moves)
            last = r["steps"][-1] if r["steps"] else {}
            print(r["game"], r["result"], r["verdict"], last.get("played"), last.get("eval_before"),
                  last.get("eval_after"), flush=True)
            rows.append(r)
    finally:
        orc.close()
    out = summary(rows)
    print(json.dumps(out, indent=2))
    if args.out:
        atomic_write_text(Path(args.out), json.dumps({"summary": out, "games": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
