"""Build the blunder set (``benchmarks/data/blunder_positions.txt``) from finished tournaments, with an
external engine as the oracle (Rapfi: it prints ``Eval +M7`` for a mate). The set is plain text in the
format of ``vct_positions.txt`` (:func:`gomoku_ai.vct.read_positions`), so the oracle is only needed
to rebuild it::

    .venv/bin/python benchmarks/build_blunder_set.py --engine ~/sparring/rapfi/build/pbrain-rapfi \\
        --player ours runs/t/r100k runs/t/aiwine --out benchmarks/data/blunder_positions.txt

For every game ``--player`` lost (on a ``--size`` board: the folders' games must all be of it), walking back from the end: the last position with the player
to move that the oracle (``--nodes``) does not call lost (no ``-M``), where the player's move let the
oracle announce a mate. Left out: a forced move (the only block of a four: the game was lost before,
beyond the oracle's horizon) and a position where the player's move was the oracle's own. The answer
is every move within two squares of a stone after which the oracle, now to move for the other side,
finds no mate; ``# loses:`` names the move that was played. Left out too, as the oracle's horizon
again: positions whose answer is empty, or holds the move that was played.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from build_vct_set import Oracle, mates, near  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.fileio import atomic_write_text  # noqa: E402
from gomoku_ai.rules import BLACK, EMPTY  # noqa: E402
from gomoku_ai import tactics as T  # noqa: E402


def rows_of(board: Board) -> List[str]:
    chars = {BLACK: "X", EMPTY: "."}
    return ["".join(chars.get(board[y * board.width + x], "O") for x in range(board.width))
            for y in range(board.height)]


def blunder(orc: Oracle, game: Dict, player: str, size: int = 15) -> Optional[Dict]:
    """The player's losing move of ``game`` (a results.jsonl row of a ``size`` x ``size`` game) as
    a dict, or None."""
    moves = [y * size + x for x, y in game["moves"]]
    black = game["black"] == player
    ours = [p for p in range(game["opening_plies"], len(moves)) if (p % 2 == 0) == black]
    for p in reversed(ours):
        b = Board(size)
        for m in moves[:p]:
            b.push(m)
        ev, best = orc.ask(b)
        if mates(ev) < 0:
            continue
        if best == b.move_name(moves[p]) or len(T.must_block(b)) == 1:
            return None
        return {"board": b, "played": moves[p], "oracle": best, "ply": p}
    return None


def answers(orc: Oracle, b: Board) -> List[int]:
    out = []
    for m in near(b):
        if b.push(m):
            b.pop()
            out.append(m)
            continue
        ev, _ = orc.ask(b)
        b.pop()
        if mates(ev) <= 0:
            out.append(m)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="finished tournament folders (results.jsonl)")
    ap.add_argument("--engine", required=True, help="the oracle's pbrain command")
    ap.add_argument("--player", default="ours", help="whose losses (the tournament name)")
    ap.add_argument("--nodes", type=int, default=300000, help="oracle nodes per question")
    ap.add_argument("--size", type=int, default=15, help="the games' board size (default: %(default)s)")
    ap.add_argument("--max-positions", type=int, default=0, help="stop after N positions (0: all)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data" / "blunder_positions.txt"))
    a = ap.parse_args()
    orc = Oracle([a.engine], a.nodes, a.size)
    blocks = [f"# Blunders of {a.player!r} in lost games (see benchmarks/build_blunder_set.py).\n"
              f"# Oracle: max_node {a.nodes}; {a.size}x{a.size} freestyle.\n"]
    n = 0
    try:
        for folder in a.folders:
            for line in Path(folder, "results.jsonl").read_text(encoding="utf-8").splitlines():
                g = json.loads(line)
                if not g.get("winner") or g[g["winner"]] == a.player or \
                        a.player not in (g["black"], g["white"]):
                    continue
                found = blunder(orc, g, a.player, a.size)
                if found is None:
                    continue
                b = found["board"]
                ans = answers(orc, b)
                if not ans or found["played"] in ans:
                    continue            # the oracle's horizon: nothing holds, or the move did
                n += 1
                tm = "X" if b.side_to_move == BLACK else "O"
                blocks.append("\n".join([
                    f"# name: blunder{n:02d}", "# kind: defend", f"# to_move: {tm}",
                    "# rule: freestyle", "# answer: " + " ".join(sorted(b.move_name(m) for m in ans)),
                    f"# loses: {b.move_name(found['played'])}",
                    f"# source: {Path(folder).name} game {g['game']} ply {found['ply']}",
                    *rows_of(b)]) + "\n")
                print(f"blunder{n:02d}: {Path(folder).name} game {g['game']}: {len(ans)} holding moves",
                      flush=True)
                atomic_write_text(a.out, "\n".join(blocks))
                if a.max_positions and n >= a.max_positions:
                    break
            if a.max_positions and n >= a.max_positions:
                break
    finally:
        orc.close()
    print(f"{n} positions -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
