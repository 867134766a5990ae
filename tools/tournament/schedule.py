"""The tournament schedule: pairings, openings (book, order, symmetries), colours, seeds.

Everything here is a pure function of the configuration and the recorded seed, so that a rerun with the same
output folder rebuilds exactly the same list of games and can skip the finished ones.

* **Pairings.** ``match``: players 0 and 1. ``roundrobin``: every ``(i, j)``, ``i < j``. ``gauntlet``: player 0
  against each other player.
* **Pairs.** Each pairing plays ``games / 2`` pairs. Pair ``k`` of every pairing uses the same opening, once
  with each colour (the first game of even pairs gives Black to the pairing's first player, odd pairs to the
  second). ``pair id = k * n_pairings + p``, game ids ``2 * pair`` and ``2 * pair + 1``: the ids do not depend
  on the number of games, so a run can be extended by rerunning with a larger ``--games``.
* **Openings.** From a file (both c-gomoku-cli formats, via :func:`gomoku_ai.records.read_openings`; lines
  that do not fit the board are skipped with a warning), in file order or shuffled once by the seed; pair ``k``
  takes ``order[k % len(book)]``; with ``transform`` the pass number ``k // len(book)`` selects one of the 8
  board symmetries (as c-gomoku-cli ``-transform``). ``random:N`` makes one random N-stone opening per pair
  index from the seed (stones alternate, inside the central 7x7). ``none``: the empty board.
* **Seeds.** Each game's seed is derived from the tournament seed and the game id.
"""
from __future__ import annotations

import hashlib
import random
from typing import List, Optional, Sequence, Tuple

from gomoku_ai.board import Board
from gomoku_ai.match import game_seed
from gomoku_ai.net.symmetries import symmetry_ids, transform_move
from gomoku_ai.records import RecordFormatError, read_openings
from gomoku_ai.rules import EMPTY, Rule

from .game import GameSpec

Move = Tuple[int, int]
FORMATS = ("match", "roundrobin", "gauntlet")


def pairings(n_players: int, fmt: str) -> List[Tuple[int, int]]:
    """The ordered pairings of a format."""
    if n_players < 2:
        raise ValueError("a tournament needs at least two players")
    if fmt == "match":
        if n_players != 2:
            raise ValueError("a match is for exactly two players")
        return [(0, 1)]
    if fmt == "roundrobin":
        return [(i, j) for i in range(n_players) for j in range(i + 1, n_players)]
    if fmt == "gauntlet":
        return [(0, j) for j in range(1, n_players)]
    raise ValueError(f"unknown format {fmt!r}: {', '.join(FORMATS)}")


def transform_point(x: int, y: int, width: int, height: int, t: int) -> Move:
    """Symmetry ``t`` (0..7, :mod:`gomoku_ai.net.symmetries`: bit 0 mirrors x, bit 1 mirrors y, bit 2
    transposes, square boards only) of the point (x, y)."""
    if t not in symmetry_ids(height, width):
        raise ValueError(f"symmetry {t} does not keep a {width}x{height} board")
    m = transform_move(y * width + x, t, height, width)
    return m % width, m // width


def transform_opening(moves: Sequence[Move], width: int, height: int, t: int) -> List[Move]:
    return [transform_point(x, y, width, height, t) for x, y in moves]


def check_opening(moves: Sequence[Move], width: int, height: int, rule: Rule) -> Optional[str]:
    """None when ``moves`` can start a game, else why not."""
    b = Board(width, height, rule)
    for i, (x, y) in enumerate(moves):
        if not (0 <= x < width and 0 <= y < height):
            return f"move {i + 1} ({x},{y}) is off the board"
        m = b.index(x, y)
        if b[m] != EMPTY:
            return f"move {i + 1} ({x},{y}) is occupied"
        b.push(m)
    if b.outcome() is not None:
        return "the opening already ends the game"
    return None


def random_opening(k: int, stones: int, width: int, height: int, rule: Rule, seed: int) -> List[Move]:
    """Random opening number ``k``: ``stones`` alternating stones inside the central 7x7 (deterministic)."""
    rng = random.Random(f"opening:{seed}:{k}")
    cx, cy = width // 2, height // 2
    box = [(cx + dx, cy + dy) for dy in range(-3, 4) for dx in range(-3, 4)
           if 0 <= cx + dx < width and 0 <= cy + dy < height]
    for _ in range(1000):
        moves = rng.sample(box, min(stones, len(box)))
        if check_opening(moves, width, height, rule) is None:
            return moves
    raise ValueError(f"cannot make a random opening of {stones} stones on a {width}x{height} board")


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def load_book(path: str, width: int, height: int, rule: Rule) -> Tuple[List[List[Move]], List[str]]:
    """Openings of ``path`` that fit the board (both c-gomoku-cli formats), and warnings for the others."""
    errors: List[RecordFormatError] = []
    book = read_openings(path, width, height, on_error="skip", errors=errors)
    warnings = [f"opening skipped: {e}" for e in errors]
    good: List[List[Move]] = []
    for i, op in enumerate(book):
        why = check_opening(op, width, height, rule)
        if why is None:
            good.append([(x, y) for x, y in op])
        else:
            warnings.append(f"opening {i + 1} of {path} skipped: {why}")
    if not good:
        raise ValueError(f"{path}: no usable opening for a {width}x{height} board")
    return good, warnings


def parse_openings_arg(text: Optional[str]) -> Tuple[str, Optional[str], int]:
    """``("none", None, 0)``, ``("random", None, N)`` or ``("file", path, 0)``."""
    if text is None or text.strip().lower() in ("", "none"):
        return "none", None, 0
    if text.lower().startswith("random:"):
        n = text.split(":", 1)[1]
        if not n.isdigit() or not 0 <= int(n) <= 40:
            raise ValueError(f"bad --openings {text!r}: random:N with N stones (0..40)")
        return "random", None, int(n)
    return "file", text, 0


def build_schedule(n_players: int, fmt: str, games_per_pairing: int, width: int, height: int, rule: Rule,
                   seed: int, openings_kind: str = "none", book: Optional[List[List[Move]]] = None,
                   random_stones: int = 0, order: str = "sequential", transform: bool = False) -> List[GameSpec]:
    """Every game of the tournament in play order (see the module docstring)."""
    pairs_per = (max(0, games_per_pairing) + 1) // 2
    pp = pairings(n_players, fmt)
    if openings_kind == "file":
        if not book:
            raise ValueError("an opening book is needed")
        idx = list(range(len(book)))
        if order == "random":
            random.Random(f"order:{seed}").shuffle(idx)
        elif order != "sequential":
            raise ValueError("--openings-order is sequential or random")
    if transform and width != height:
        raise ValueError("--transform needs a square board")
    out: List[GameSpec] = []
    for k in range(pairs_per):
        if openings_kind == "file":
            assert book is not None
            bi = idx[k % len(book)]
            oi: Optional[int] = bi
            t = (k // len(book)) % 8 if transform else 0
            opening = transform_opening(book[bi], width, height, t)
        elif openings_kind == "random":
            oi, t = k, 0
            opening = random_opening(k, random_stones, width, height, rule, seed)
        else:
            oi, t, opening = None, 0, []
        for p, (a, b) in enumerate(pp):
            pair = k * len(pp) + p
            first, second = (a, b) if k % 2 == 0 else (b, a)
            for c, (black, white) in enumerate(((first, second), (second, first))):
                gid = 2 * pair + c
                out.append(GameSpec(gid, pair, k, p, black, white, oi, t, list(opening), game_seed(seed, gid)))
    return out
