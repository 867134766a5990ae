"""Build the VCT / defence position set (``benchmarks/data/vct_positions.txt``) with an external
engine as the oracle. Needs a pbrain engine that prints mate scores (Rapfi: ``Eval +M7``); the set it
writes is plain text and is what the tests and ``bench_vct.py`` read, so the engine is only needed
to rebuild it::

    .venv/bin/python benchmarks/build_vct_set.py --engine /opt/rapfi/pbrain-rapfi \\
        --records ../shared/data/gomocup2024_freestyle15 --wins 40 --defences 30

Positions come from record games won by a five, a few plies before the end:

* ``win``: the side to move has a forced win that the oracle proves (``+M``, at most
  ``--max-mate`` plies) but no VCF (so at least one three is needed), and the oracle's own move is
  a threat (a four or an open three). The answer is that move and every other threat move after
  which the oracle, defending, reports itself mated (``-M``).
* ``defend``: the side to move is not lost (no ``-M``), the opponent has no VCF if we passed,
  yet at least half of our moves within two squares of a stone let the oracle mate (within
  ``--max-mate`` plies): the opponent threatens a VCT. The answer is every such move after which
  the oracle, attacking, finds no mate; kept when that is at most 10 moves. (No position is asked
  with a pass: an engine reads the side to move from the stone counts.)

Each position is one block: ``# key: value`` header lines (name, kind, to_move, rule, answer in
h8 names, source) and the board rows (``X`` black, ``O`` white, ``.`` empty), then a blank line.
"""
from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gomoku_ai import tactics as T  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.fileio import atomic_write_text  # noqa: E402
from gomoku_ai.records import load_games  # noqa: E402
from gomoku_ai.rules import BLACK, EMPTY, Rule  # noqa: E402
from gomoku_ai.vct import threat_moves  # noqa: E402

_EVAL = re.compile(r"Eval\s+([+-]?M?\d+)")


class Oracle:
    """A pbrain engine asked for (move, eval) of positions given as BOARD blocks."""

    def __init__(self, cmd: Sequence[str], nodes: int, size: int) -> None:
        self.p = subprocess.Popen(list(cmd), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.nodes = nodes
        self._send(f"START {size}")
        self._wait(lambda s: s.startswith("OK"))
        self._send(f"INFO max_node {nodes}")
        self._send("INFO timeout_turn 30000")

    def _send(self, line: str) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def _wait(self, done: Callable[[str], bool]) -> List[str]:
        assert self.p.stdout is not None
        lines = []
        while True:
            s = self.p.stdout.readline()
            if not s:
                raise RuntimeError("oracle exited")
            s = s.strip()
            lines.append(s)
            if done(s):
                return lines

    def ask(self, board: Board) -> Tuple[str, Optional[str]]:
        """(eval text of the side to move, e.g. '+M5' / '-M3' / '120', move name)."""
        me = board.side_to_move
        self._send("BOARD")
        # in move order: Rapfi takes the first listed stone as Black's
        for m in board.moves:
            x, y = m % board.width, m // board.width
            self._send(f"{x},{y},{1 if board[m] == me else 2}")
        self._send("DONE")
        lines = self._wait(lambda s: re.fullmatch(r"\d+,\d+", s) is not None)
        time.sleep(0.1)   # Rapfi drops a command that arrives while it is finishing a move
        ev = None
        for s in lines:
            found = _EVAL.search(s)
            if found:
                ev = found.group(1)
        x, y = map(int, lines[-1].split(","))
        return ev or "0", board.move_name(board.index(x, y))

    def close(self) -> None:
        try:
            self._send("END")
            self.p.wait(2)
        except Exception:
            self.p.kill()


def mates(ev: str) -> int:
    """+1: the side to move mates, -1: it is mated, 0: neither."""
    if "M" not in ev:
        return 0
    return -1 if ev.startswith("-") else 1


def mate_plies(ev: str) -> int:
    """Plies to the mate of a '+M7' / '-M4' eval (a large number for a plain eval)."""
    return int(ev.lstrip("+-M")) if "M" in ev else 1 << 30


def near(board: Board, r: int = 2) -> List[int]:
    out = []
    for m in range(board.width * board.height):
        if board[m] != EMPTY:
            continue
        x, y = m % board.width, m // board.width
        if any(board[board.index(xx, yy)] != EMPTY
               for yy in range(max(0, y - r), min(board.height, y + r + 1))
               for xx in range(max(0, x - r), min(board.width, x + r + 1))):
            out.append(m)
    return out


def block(name: str, kind: str, board: Board, answer: List[int], source: str) -> str:
    tm = "X" if board.side_to_move == BLACK else "O"
    head = [f"# name: {name}", f"# kind: {kind}", f"# to_move: {tm}",
            f"# rule: {board.rule.value}",
            f"# answer: {' '.join(sorted(board.move_name(m) for m in answer))}",
            f"# source: {source}"]
    return "\n".join(head) + "\n" + board.to_ascii() + "\n\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine", required=True)
    ap.add_argument("--nodes", type=int, default=300000)
    ap.add_argument("--records", nargs="+", required=True)
    ap.add_argument("--wins", type=int, default=40)
    ap.add_argument("--defences", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-mate", type=int, default=11,
                    help="longest oracle mate kept, in plies (a VCT of about (N+1)/2 threats)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "data" / "vct_positions.txt"))
    a = ap.parse_args()
    rng = random.Random(a.seed)
    games = [g for g in load_games(a.records, on_error="skip")
             if g.result is not None and len(g.moves) >= 20 and (g.width, g.height) == (15, 15)]
    rng.shuffle(games)
    header = ("# VCT and defence positions, labelled by an external engine (see "
              "benchmarks/build_vct_set.py).\n# Oracle: max_node %d; 15x15 freestyle.\n\n" % a.nodes)
    blocks: List[str] = []
    wins = defs = 0
    done_src = set()
    if Path(a.out).exists():             # resume: keep what an earlier run wrote
        old = Path(a.out).read_text().split("\n\n")
        for blk in old:
            if "# kind: win" in blk:
                wins += 1
            elif "# kind: defend" in blk:
                defs += 1
            else:
                continue
            blocks.append(blk.strip("\n") + "\n\n")
            for ln in blk.splitlines():
                if ln.startswith("# source: "):
                    done_src.add(ln[len("# source: "):].rsplit(" ply", 1)[0])
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        atomic_write_text(a.out, header + "".join(blocks))

    orc = Oracle(a.engine.split(), a.nodes, 15)
    try:
        for gi, g in enumerate(games):
            if wins >= a.wins and defs >= a.defences:
                break
            b = Board(15, 15, Rule.FREESTYLE)
            moves = [b.index(x, y) for x, y in g.moves]
            ok = True
            for m in moves:
                if not b.is_empty(m):
                    ok = False
                    break
                b.push(m)
            if not ok or b.winner is None:
                continue
            back = rng.randint(5, 13)
            b = Board.from_moves(moves[:len(moves) - back], 15, 15, Rule.FREESTYLE)
            src = Path(g.source or "?").name + f" ply {len(moves) - back}"
            if Path(g.source or "?").name in done_src:
                continue
            if b.winner is not None or T.winning_moves(b) or T.must_block(b):
                continue
            ev, mv = orc.ask(b)
            if mates(ev) > 0 and mate_plies(ev) <= a.max_mate and wins < a.wins \
                    and T.find_vcf(b, node_limit=200000) is None:
                threats = [m for m, _f, _t in threat_moves(b)]
                ans = []
                for m in threats:
                    b.push(m)
                    e2, _ = orc.ask(b)
                    b.pop()
                    if mates(e2) < 0 or b.move_name(m) == mv:
                        ans.append(m)
                if ans and mv is not None and b.parse(mv) in threats:
                    wins += 1
                    blocks.append(block(f"win{wins:02d}", "win", b, ans, src))
                    save()
                    print(f"win {wins}: {src} {ev} answer {[b.move_name(m) for m in ans]}",
                          flush=True)
                continue
            if mates(ev) == 0 and defs < a.defences:
                b.pass_turn()
                threat_vcf = T.find_vcf(b, node_limit=200000) is not None
                b.pass_turn()
                if threat_vcf:
                    continue            # a VCF threat: the VCF tests cover it
                ans = []
                cands = near(b)
                lost = 0
                for m in cands:
                    b.push(m)
                    e2, _ = orc.ask(b)
                    b.pop()
                    if mates(e2) <= 0:
                        ans.append(m)
                    elif mate_plies(e2) <= a.max_mate:
                        lost += 1
                if ans and len(ans) <= 10 and lost >= len(cands) // 2:
                    defs += 1
                    blocks.append(block(f"defend{defs:02d}", "defend", b, ans, src))
                    save()
                    print(f"defend {defs}: {src} answer {[b.move_name(m) for m in ans]}",
                          flush=True)
    finally:
        orc.close()
    save()
    print(f"wrote {wins} win and {defs} defend positions to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
