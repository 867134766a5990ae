"""Openings of training matches and self-play games, as flat moves (Black first): from a file or lists of
moves (:func:`openings_to_flat`), or random stones near the centre (:func:`random_opening`).

Shared by self-play (:mod:`.selfplay`) and gating (:mod:`.gating`), which do not import each other.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from ..board import Board

__all__ = ["Opening", "openings_path_text", "openings_to_flat", "random_opening"]

Opening = Tuple[int, ...]          # flat moves, Black first


def openings_path_text(errors: Sequence[Exception]) -> str:
    """``"first error; "`` for a message, or ``""``."""
    return f"{errors[0]}; " if errors else ""


def openings_to_flat(openings: Union[None, str, os.PathLike, Sequence], width: int,
                     height: int) -> Optional[List[Opening]]:
    """Openings given as a file (``records.read_openings``), or as lists of (x, y) or flat moves,
    as tuples of flat moves.

    From a file, lines that do not fit the board (a 20x20 book on 15x15) are left out, as the
    tournament runner does; ``ValueError`` when none is left. Lists given directly must fit.
    """
    if openings is None:
        return None
    if isinstance(openings, (str, os.PathLike)):
        from ..records import RecordFormatError, read_openings
        errors: List[RecordFormatError] = []
        openings = read_openings(Path(openings), width=width, height=height,
                                 on_error="skip", errors=errors)
        if not openings:
            raise ValueError(f"{openings_path_text(errors)}no opening of the file fits the "
                             f"{width}x{height} board")
    out: List[Opening] = []
    for op in openings:
        flat = []
        for m in op:
            if isinstance(m, (tuple, list)):
                x, y = int(m[0]), int(m[1])
                if not (0 <= x < width and 0 <= y < height):
                    raise ValueError(f"opening move ({x},{y}) is off the {width}x{height} board")
                flat.append(y * width + x)
            else:
                flat.append(int(m))
        out.append(tuple(flat))
    if not out:
        raise ValueError("no openings")
    return out


def random_opening(board: Board, rng: np.random.Generator, stones: Tuple[int, int],
                   radius: int) -> Opening:
    """``stones[0]..stones[1]`` distinct random squares within ``radius`` of the centre."""
    w, h = board.width, board.height
    cx, cy = w // 2, h // 2
    squares = [y * w + x for y in range(max(0, cy - radius), min(h, cy + radius + 1))
               for x in range(max(0, cx - radius), min(w, cx + radius + 1))]
    k = int(rng.integers(stones[0], stones[1] + 1))
    k = min(k, len(squares))
    return tuple(int(m) for m in rng.choice(squares, size=k, replace=False))
