"""``gomoku play``: a game in the terminal (plain text front end; see the terminal UI issue).

Human moves are typed as ``h8`` or ``7,7``; ``undo``, ``hint``, ``quit`` are understood.
"""
from __future__ import annotations

import sys
from typing import Any, Optional, TextIO

from gomoku_ai.board import Board, IllegalMoveError
from gomoku_ai.player import Limit
from gomoku_ai.shipped import load_player
from gomoku_ai.rules import BLACK, Rule


def parse_size(text: str) -> "tuple[int, int]":
    if "x" in text.lower():
        w, h = text.lower().split("x", 1)
        return int(w), int(h)
    return int(text), int(text)




def render(board: Board) -> str:
    last = board.last_move
    rows = []
    head = "    " + " ".join(chr(ord("a") + x) for x in range(board.width))
    rows.append(head)
    sym = {0: ".", 1: "X", 2: "O", 3: "#"}
    for y in range(board.height):
        cells = []
        for x in range(board.width):
            m = y * board.width + x
            ch = sym[int(board.cells[y, x])]
            cells.append(ch.lower() if m == last else ch)
        rows.append(f"{y + 1:>3} " + " ".join(cells))
    return "\n".join(rows)


def run(args: Any, inp: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    w, h = parse_size(args.size)
    board = Board(w, h, Rule.parse(args.rule))
    player = load_player(args.model, board.rule)
    limit = Limit(visits=args.visits) if args.visits else Limit(soft_ms=args.time * 1000.0)
    humans = {"black": {BLACK}, "white": {2}, "none": set(), "both": {BLACK, 2}}[args.color]
    out.write(f"{w}x{h} {board.rule.value}; you play "
              f"{'X (black)' if BLACK in humans else ''}{'O (white)' if 2 in humans else ''}"
              f"{'nobody (watching)' if not humans else ''}. Moves: h8 or 7,7; undo, hint, quit.\n")
    while board.outcome() is None:
        if args.max_moves is not None and len(board.moves) >= args.max_moves:
            out.write("move limit reached\n")
            return 0
        out.write(render(board) + "\n")
        side = board.side_to_move
        if side in humans:
            out.write(f"{'X' if side == BLACK else 'O'} to move> ")
            out.flush()
            line = inp.readline()
            if not line:
                return 0
            cmd = line.strip().lower()
            if cmd in ("quit", "exit", "q"):
                return 0
            if cmd == "undo":
                for _ in range(2 if len(humans) == 1 else 1):
                    if board.moves:
                        board.pop()
                player.new_game()
                continue
            if cmd == "hint":
                info = player.think(board, limit)
                out.write(f"hint: {board.move_name(info.move)} (win rate {info.winrate:.0%})\n")
                continue
            try:
                m = board.parse(cmd)
                if board.rule is Rule.RENJU and side == BLACK:
                    from gomoku_ai.renju import is_forbidden
                    if board.is_empty(m) and is_forbidden(board, m):
                        raise IllegalMoveError(f"{cmd} is forbidden for black under renju")
                board.play(m)
            except (ValueError, IllegalMoveError) as e:
                out.write(f"{e}\n")
            continue
        info = player.think(board, limit)
        board.play(info.move)
        out.write(f"engine plays {board.move_name(info.move)} ({info.move % w},{info.move // w}); "
                  f"win rate {info.winrate:.0%}, {info.visits} visits, {info.source}\n")
    out.write(render(board) + "\n")
    oc = board.outcome()
    names = {BLACK: "X (black)", 2: "O (white)"}
    out.write(("draw" if oc.winner is None else f"{names[oc.winner]} wins") +
              f" after {len(board.moves)} moves\n")
    return 0
