"""Teacher data: games played by a strong external pbrain engine, from openings cut out of real games.

The policy targets of a network are only as good as the moves it copies. ``gomoku train teacher``
(``tools/train/cli.py``) lets any pbrain engine (Rapfi, AIWine, an older version of this one) play
itself through the tournament runner -- resumable, with progress, one record file per game -- from
openings taken as prefixes of game records (for example the Gomocup 2024 games in
``../shared/data/``). ``gomoku train pack --records OUT/match/games --openings OUT/openings.txt``
then turns those games into a training shard: each engine move is a policy target, the game's
result (from the board: a five or a full board, never a forfeit) the value target of every position
after the opening.

This module holds the torch-free part: choosing the openings.
"""
from __future__ import annotations

import random
from typing import Callable, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from ..board import Board
from ..net.symmetries import NUM_SYMMETRIES, transform_move
from ..records import GameRecord
from ..rules import Rule

Move = Tuple[int, int]

__all__ = ["openings_from_records", "edge_openings", "centre_openings", "opening_shape"]


def openings_from_records(records: Iterable[GameRecord], count: int, min_plies: int,
                          max_plies: int, width: int = 15, height: int = 15,
                          rule: Rule = Rule.FREESTYLE, seed: int = 0,
                          min_rest: int = 10, embed_smaller: bool = False) -> List[List[Move]]:
    """Up to ``count`` distinct openings, each the first k moves of one record (k drawn uniformly
    from ``min_plies..max_plies`` per record, with ``seed``).

    With ``embed_smaller``, records of a smaller board are used too: their opening is shifted by a
    seeded random offset (each record's own, uniform over the offsets that keep the record's whole
    board on this one), so 15x15 games give openings for 20x20, where there are few records.

    A record is used only when it is on a ``width`` x ``height`` board (or a smaller one, with
    ``embed_smaller``), its first k moves are legal
    and decide nothing (no five, no full board), and at least ``min_rest`` more moves were played in
    it (so the opening was a live position for strong players). Records are visited in a seeded
    random order; duplicates (the same moves in the same order) are kept once. Raises ValueError on
    bad bounds.
    """
    if count <= 0:
        raise ValueError(f"count must be positive, got {count}")
    if not 1 <= min_plies <= max_plies:
        raise ValueError(f"need 1 <= min_plies <= max_plies, got {min_plies}..{max_plies}")
    if min_rest < 0:
        raise ValueError(f"min_rest must be >= 0, got {min_rest}")
    rng = random.Random(seed)
    recs = [r for r in records if (r.width, r.height) == (width, height)
            or (embed_smaller and r.width <= width and r.height <= height)]
    rng.shuffle(recs)
    seen = set()
    out: List[List[Move]] = []
    for rec in recs:
        k = rng.randint(min_plies, max_plies)
        if len(rec.moves) < k + min_rest:
            continue
        dx = dy = 0
        if (rec.width, rec.height) != (width, height):   # no draw otherwise: old seeds unchanged
            dx = rng.randint(0, width - rec.width)
            dy = rng.randint(0, height - rec.height)
        prefix: List[Move] = [(int(m[0]) + dx, int(m[1]) + dy) for m in rec.moves[:k]]
        key = tuple(prefix)
        if key in seen or not _live(prefix, width, height, rule):
            continue
        seen.add(key)
        out.append([(int(x), int(y)) for x, y in prefix])
        if len(out) >= count:
            break
    return out


def _live(moves: Sequence[Move], width: int, height: int, rule: Rule) -> bool:
    """Every move legal (on the board, empty square) and the game still undecided after them."""
    b = Board(width, height, rule=rule)
    for x, y in moves:
        if not (0 <= x < width and 0 <= y < height):
            return False
        m = b.index(x, y)
        if not b.is_empty(m):
            return False
        b.push(m)
        if b.winner is not None or b.is_full():
            return False
    return True


def edge_openings(count: int, min_plies: int, max_plies: int, width: int = 20, height: int = 20,
                  rule: Rule = Rule.FREESTYLE, seed: int = 0, band: int = 3,
                  spread: int = 3) -> List[List[Move]]:
    """``count`` distinct random openings of ``min_plies..max_plies`` stones (Black first) near an
    edge of the board, in the style of the openings Gomocup plays 20x20 freestyle from
    (GomocupJudge's file: a few stones within three lines of an edge or in a corner).

    The first stone lies within ``band`` lines of a random edge (anywhere along it); each next one
    on an empty square within ``spread`` squares (Chebyshev) of a random earlier stone, so the
    cluster stays by that edge. An opening that decides the game is drawn again; with ``seed``
    the list is reproducible. Raises ValueError on bad bounds or when ``count`` distinct openings
    cannot be found (a tiny board)."""
    if band < 0:
        raise ValueError(f"band must be >= 0, got {band}")

    def first(rng: random.Random) -> Move:
        edge = rng.randrange(4)
        d = rng.randint(0, min(band, (height if edge < 2 else width) - 1))
        along = rng.randrange(width if edge < 2 else height)
        return {0: (along, d), 1: (along, height - 1 - d), 2: (d, along), 3: (width - 1 - d, along)}[edge]

    return _cluster_openings("edge", first, count, min_plies, max_plies, width, height, rule, seed,
                             spread)


def centre_openings(count: int, min_plies: int, max_plies: int, width: int = 15, height: int = 15,
                    rule: Rule = Rule.FREESTYLE, seed: int = 0, radius: int = 2, spread: int = 3,
                    exclude: Iterable[Sequence[Move]] = ()) -> List[List[Move]]:
    """``count`` distinct random openings of ``min_plies..max_plies`` stones (Black first) around
    the centre, in the style of the Piskvork 15x15 tournament openings (three or five stones within
    a few squares of each other, White or Black to move).

    The first stone lies within ``radius`` squares (Chebyshev) of the centre, each next one on an
    empty square within ``spread`` of a random earlier stone. An opening that decides the game, or
    one with the position of an opening in ``exclude`` up to the board's eight symmetries and a
    shift (:func:`opening_shape`: say the openings a match measures on, kept out of the training
    data), is drawn again. Seeded; raises ValueError on bad bounds or when ``count`` distinct
    openings cannot be found."""
    if radius < 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    cx, cy = width // 2, height // 2
    shapes = frozenset(opening_shape(o) for o in exclude)

    def first(rng: random.Random) -> Move:
        return (min(width - 1, max(0, cx + rng.randint(-radius, radius))),
                min(height - 1, max(0, cy + rng.randint(-radius, radius))))

    return _cluster_openings("centre", first, count, min_plies, max_plies, width, height, rule, seed,
                             spread, shapes, by_shape=True)


def opening_shape(moves: Sequence[Move]) -> Tuple[Tuple[Move, ...], Tuple[Move, ...]]:
    """The position an opening sets up, the same for all its images under the eight symmetries
    of the square and any shift: (Black's stones, White's stones), each sorted, shifted so the
    smallest x and y of all the stones are 0, the least such pair over the eight symmetries
    (:func:`gomoku_ai.net.symmetries.transform_move`, on the square that holds the stones).
    The move order does not count (two openings that reach one position are one)."""
    if not moves:
        return ((), ())
    mx = min(x for x, _ in moves)
    my = min(y for _, y in moves)
    side = max(max(x - mx, y - my) for x, y in moves) + 1
    flat = [(y - my) * side + (x - mx) for x, y in moves]
    best: Optional[Tuple[Tuple[Move, ...], Tuple[Move, ...]]] = None
    for k in range(NUM_SYMMETRIES):
        pts = [(m % side, m // side) for m in (transform_move(f, k, side, side) for f in flat)]
        ox = min(x for x, _ in pts)
        oy = min(y for _, y in pts)
        pts = [(x - ox, y - oy) for x, y in pts]
        shape = (tuple(sorted(pts[0::2])), tuple(sorted(pts[1::2])))
        if best is None or shape < best:
            best = shape
    assert best is not None
    return best


def _cluster_openings(kind: str, first: Callable[[random.Random], Move], count: int, min_plies: int,
                      max_plies: int, width: int, height: int, rule: Rule, seed: int, spread: int,
                      exclude: FrozenSet[Tuple[Tuple[Move, ...], Tuple[Move, ...]]] = frozenset(),
                      by_shape: bool = False) -> List[List[Move]]:
    """Random clusters: ``first(rng)`` places the first stone, each next one goes within ``spread``
    of a random earlier stone; live, not of a shape in ``exclude``, and distinct: as move lists, or
    with ``by_shape`` as positions up to symmetry and shift (:func:`opening_shape`)."""
    if count <= 0:
        raise ValueError(f"count must be positive, got {count}")
    if not 1 <= min_plies <= max_plies:
        raise ValueError(f"need 1 <= min_plies <= max_plies, got {min_plies}..{max_plies}")
    if spread < 1 or max_plies >= width * height:
        raise ValueError(f"spread >= 1 and fewer stones than squares are needed "
                         f"(spread {spread}, {max_plies} stones)")
    rng = random.Random(seed)
    seen = set()
    out: List[List[Move]] = []
    for _ in range(50 * count):
        k = rng.randint(min_plies, max_plies)
        moves: List[Move] = [first(rng)]
        taken = {moves[0]}
        while len(moves) < k:
            cx, cy = rng.choice(moves)
            x = cx + rng.randint(-spread, spread)
            y = cy + rng.randint(-spread, spread)
            if 0 <= x < width and 0 <= y < height and (x, y) not in taken:
                moves.append((x, y))
                taken.add((x, y))
        shape = opening_shape(moves) if by_shape or exclude else None
        key = shape if by_shape else tuple(moves)
        if key in seen or not _live(moves, width, height, rule) or shape in exclude:
            continue
        seen.add(key)
        out.append(moves)
        if len(out) >= count:
            return out
    raise ValueError(f"only {len(out)} distinct {kind} openings of {min_plies}..{max_plies} stones "
                     f"found on {width}x{height}, {count} wanted")
