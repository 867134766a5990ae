"""Input encoding: a :class:`~gomoku_ai.board.Board` to the network's float32 planes.

This is the one module shared by inference and training, so that both see exactly the same input.
A model records :data:`ENCODING_VERSION` and :data:`PLANE_NAMES` in its ``.json`` config; the loader
refuses a model whose planes differ from these. Change the planes only together with a new version.

Planes (version 1), each (H, W) with ``[y, x]`` indexing (row ``y`` from the top, column ``x``):

====  ===============  ===========================================================================
 #     name             value
====  ===============  ===========================================================================
 0     own              1 where the side to move has a stone
 1     opponent         1 where the other side has a stone
 2     on_board         1 on every playable square (empty or stone), 0 on a wall (a protocol
                        ``x,y,3`` square). Convolutions pad with zeros, so this plane is what
                        lets the network see the board edge (and walls) at any board size
 3     black_to_move    constant: 1 everywhere if Black is to move, else 0
 4     last_move        one-hot at the last move of ``board.moves``, all zero when there is none
====  ===============  ===========================================================================

Note that a board built by ``Board.from_ascii`` / ``set_position`` has set-up stones on its move
stack, so its "last move" is the last set-up stone.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from .. import native
from ..rules import BLACK, WALL, opponent
from .symmetries import transform_planes

if TYPE_CHECKING:
    from ..board import Board

ENCODING_VERSION = 1
PLANE_NAMES = ("own", "opponent", "on_board", "black_to_move", "last_move")
NUM_PLANES = len(PLANE_NAMES)


def encode(board: Board, out: Optional[np.ndarray] = None) -> np.ndarray:
    """The (P, H, W) float32 planes of ``board`` (see the module docstring).

    ``out``, if given, must be a float32 array of that shape; it is filled and returned (no
    allocation, for search loops).
    """
    cells = board.cells
    h, w = cells.shape
    if out is None:
        out = np.empty((NUM_PLANES, h, w), dtype=np.float32)
    elif out.shape != (NUM_PLANES, h, w) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 {(NUM_PLANES, h, w)}, got {out.dtype} {out.shape}")
    stm = board.side_to_move
    np.equal(cells, stm, out=out[0], casting="unsafe")
    np.equal(cells, opponent(stm), out=out[1], casting="unsafe")
    np.not_equal(cells, WALL, out=out[2], casting="unsafe")
    out[3].fill(1.0 if stm == BLACK else 0.0)
    last = out[4]
    last.fill(0.0)
    if board.moves:
        m = board.moves[-1]
        last[m // w, m % w] = 1.0
    return out


#: the C core's encoder (:func:`gomoku_ai.native.encoder`); None: numpy (the same planes)
_NATIVE_ENCODE = native.encoder()


def encode_transformed(board: Board, k: int = 0) -> np.ndarray:
    """``transform_planes(encode(board), k)``: the (P, H', W') float32 planes of ``board`` seen
    through symmetry ``k`` (:mod:`gomoku_ai.net.symmetries`; H' x W' is W x H when ``k`` transposes),
    a new array. The C core makes it in one pass where it is built (the same values: every plane
    is 0 or 1), which is what a search's leaf evaluation calls."""
    if not 0 <= k < 8:
        raise ValueError(f"symmetry id {k} is not in 0..7")
    fn = _NATIVE_ENCODE
    if fn is not None:
        h, w = board.height, board.width
        out = np.empty((NUM_PLANES, w, h) if k & 4 else (NUM_PLANES, h, w), np.float32)
        fn(board._buf, w, h, board.side_to_move, board.moves[-1] if board.moves else -1, k, out)
        return out
    x = encode(board)
    return transform_planes(x, k) if k else x


def encode_batch(boards: Sequence, out: Optional[np.ndarray] = None) -> np.ndarray:
    """The (N, P, H, W) float32 planes of ``boards`` (all of the same size)."""
    n = len(boards)
    if n == 0:
        raise ValueError("encode_batch needs at least one board")
    h, w = boards[0].cells.shape
    for b in boards:
        if b.cells.shape != (h, w):
            raise ValueError(f"encode_batch: boards of different sizes ({w}x{h} and "
                             f"{b.cells.shape[1]}x{b.cells.shape[0]}); batch them separately")
    if out is None:
        out = np.empty((n, NUM_PLANES, h, w), dtype=np.float32)
    elif out.shape != (n, NUM_PLANES, h, w) or out.dtype != np.float32:
        raise ValueError(f"out must be float32 {(n, NUM_PLANES, h, w)}, "
                         f"got {out.dtype} {out.shape}")
    cells = np.stack([b.cells for b in boards])                      # (N, H, W) int8
    stm = np.array([b.side_to_move for b in boards], dtype=np.int8)  # (N,)
    s = stm[:, None, None]
    np.equal(cells, s, out=out[:, 0], casting="unsafe")
    np.equal(cells, 3 - s, out=out[:, 1], casting="unsafe")     # rules.opponent of each, as an array
    np.not_equal(cells, WALL, out=out[:, 2], casting="unsafe")
    out[:, 3] = (stm == BLACK).astype(np.float32)[:, None, None]
    out[:, 4].fill(0.0)
    idx = [(i, b.moves[-1]) for i, b in enumerate(boards) if b.moves]
    if idx:
        ii, mm = np.array(idx, dtype=np.intp).T
        out[ii, 4, mm // w, mm % w] = 1.0
    return out


def encode_arrays(cells: np.ndarray, stm: np.ndarray, last: np.ndarray,
                  out: Optional[np.ndarray] = None) -> np.ndarray:
    """The (N, P, H, W) float32 planes from stored positions (training shards): ``cells``
    (N, H, W) int8, ``stm`` (N,) side to move, ``last`` (N,) flat index of the last move or -1.
    Gives exactly what :func:`encode` gives for the same boards."""
    n, h, w = cells.shape
    if out is None:
        out = np.empty((n, NUM_PLANES, h, w), dtype=np.float32)
    s = np.asarray(stm, np.int8)[:, None, None]
    np.equal(cells, s, out=out[:, 0], casting="unsafe")
    np.equal(cells, 3 - s, out=out[:, 1], casting="unsafe")     # rules.opponent of each, as an array
    np.not_equal(cells, WALL, out=out[:, 2], casting="unsafe")
    out[:, 3] = (np.asarray(stm) == BLACK).astype(np.float32)[:, None, None]
    out[:, 4].fill(0.0)
    last = np.asarray(last, np.int64)
    ii = np.flatnonzero(last >= 0)
    if len(ii):
        mm = last[ii]
        out[ii, 4, mm // w, mm % w] = 1.0
    return out
