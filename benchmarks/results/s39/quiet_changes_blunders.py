"""The quiet-move preference on a blunder set: the player searches each position (920 ms, as
``bench_blunders.py``), and each move the preference changed is printed with whether the search's
move and the played one hold (in the position's answer). Ends with one JSON line: ``held``,
``repeated`` (the move that lost the game), ``changed``, ``fixed`` (a losing search move changed
into a holding one), ``broken`` (the reverse). The settings are the environment's
(``PYGOMOKU_QUIET=first_nodes=0,pn_nodes=0`` for session 38's preference).

    taskset -c 1 .venv/bin/python benchmarks/results/s39/quiet_changes_blunders.py \\
        benchmarks/data/blunder_positions_20.txt
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import gomoku_ai.player as P  # noqa: E402
from gomoku_ai import shipped  # noqa: E402
from gomoku_ai.player import Limit  # noqa: E402
from gomoku_ai.vct import read_positions  # noqa: E402


def main(path: str) -> None:
    positions = read_positions(path)
    b0 = positions[0].board()
    player = shipped.load_player(None, b0.rule, width=b0.width, height=b0.height)
    seen: Dict[str, Any] = {}
    real = P._quiet_choice

    def spy(board: Any, info: Any, deadline: float, quiet: Any = P.QUIET_SEARCH) -> Any:
        out = real(board, info, deadline, quiet)
        seen["search"], seen["played"] = info.move, out.move
        return out

    P._quiet_choice = spy
    held = repeated = changed = fixed = broken = 0
    for p in positions:
        seen.clear()
        b = p.board()
        player.new_game()
        info = player.think(b, Limit(soft_ms=920, hard_ms=920))
        held += info.move in p.answer
        repeated += info.move in p.loses
        if seen and seen["search"] != seen["played"]:
            s_ok, p_ok = seen["search"] in p.answer, seen["played"] in p.answer
            changed += 1
            fixed += p_ok and not s_ok
            broken += s_ok and not p_ok
            print(f"{p.name}: search {b.move_name(seen['search'])} ({'holds' if s_ok else 'loses'}) -> "
                  f"{b.move_name(seen['played'])} ({'holds' if p_ok else 'loses'})", flush=True)
    print(json.dumps({"set": path, "positions": len(positions), "held": held, "repeated": repeated,
                      "changed": changed, "fixed": fixed, "broken": broken}))


if __name__ == "__main__":
    main(sys.argv[1])
