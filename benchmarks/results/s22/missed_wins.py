"""Wins we did not take: for each game of a finished tournament that ``--player`` did not win as
``--colour``, ask an oracle engine (a pbrain command, e.g. Rapfi at a node limit) at every position
where the player was to move, and report the first position the oracle calls a forced win for the
player (Rapfi's ``Eval +Mn``), the oracle's move, the move we played, and whether our own VCT search
(depth ``--depth``, ``--nodes`` attacker nodes, no clock) finds a win there.

    .venv/bin/python benchmarks/results/s22/missed_wins.py runs/s21/r100k-15 --player ours \
        --oracle ~/sparring/rapfi/build/pbrain-rapfi --oracle-nodes 1000000 --out runs/s22/missed.json

Session 22's probe (one core, about 20-40 s a game).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.fileio import atomic_write_text  # noqa: E402
from gomoku_ai.vct import vct_search  # noqa: E402
from protocol.manager import EngineClient, MoveReply  # noqa: E402

MATE = re.compile(r"Eval \+M(\d+)")


def ask_oracle(eng: EngineClient, size: int, nodes: int, moves: List[Tuple[int, int]]) -> MoveReply:
    """The oracle's reply (with its messages) in the position after ``moves``, from a new game at a
    node limit of ``nodes`` and no clock."""
    eng.new_game(size, size, [("max_node", nodes), ("timeout_turn", 60000), ("timeout_match", 0),
                              ("time_left", 2147483647)])
    return eng.play(moves)


def report(summary: Dict[str, Any], rows: List[Dict[str, Any]], out: Optional[Path]) -> None:
    """Print ``summary``; write it with ``rows`` to ``out`` (atomically) when given."""
    print(json.dumps(summary))
    if out:
        atomic_write_text(out, json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--player", default="ours")
    ap.add_argument("--colour", default="black", choices=("black", "white"))
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--oracle-nodes", type=int, default=1_000_000)
    ap.add_argument("--depth", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=30000)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    meta = json.loads((a.folder / "tournament.json").read_text())
    size = int(meta.get("width", 15))
    games = [json.loads(s) for s in (a.folder / "results.jsonl").read_text().splitlines() if s.strip()]
    games = [g for g in games if g[a.colour] == a.player and g.get("winner") != a.colour]
    eng = EngineClient([a.oracle], name="oracle", settle_ms=100.0)   # Rapfi drops a command sent too soon after its reply
    eng.start()
    rows: List[Dict[str, Any]] = []
    first = 0 if a.colour == "black" else 1
    for g in games:
        moves = [tuple(m) for m in g["moves"]]
        row: Dict[str, Any] = {"game": g["game"], "result": g["result"], "plies": len(moves), "mate_ply": None}
        for ply in range(max(g.get("opening_plies", 0), 1), len(moves)):
            if ply % 2 != first:
                continue
            rep = ask_oracle(eng, size, a.oracle_nodes, moves[:ply])
            text = " ".join(rep.messages)
            mt = MATE.search(text)
            if mt:
                b = Board(size, size)
                for x, y in moves[:ply]:
                    b.play(y * size + x)
                t = time.perf_counter()
                res = vct_search(b, max_depth=a.depth, node_limit=a.nodes, vcf_nodes=2000)
                row.update(mate_ply=ply, mate_in=int(mt.group(1)), oracle_move=[rep.x, rep.y],
                           played=list(moves[ply]), our_vct=res.line is not None,
                           our_vct_s=round(time.perf_counter() - t, 3))
                for depth, nodes in ((7, 300000), (9, 3000000)):
                    t = time.perf_counter()
                    r2 = vct_search(b, max_depth=depth, node_limit=nodes, vcf_nodes=2000)
                    row[f"vct_d{depth}"] = [r2.line is not None, round(time.perf_counter() - t, 2)]
                break
        rows.append(row)
        print(json.dumps(row), flush=True)
    eng.quit()
    summary = {"games": len(rows), "with_mate": sum(r["mate_ply"] is not None for r in rows),
               "our_vct_found": sum(bool(r.get("our_vct")) for r in rows)}
    report(summary, rows, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
