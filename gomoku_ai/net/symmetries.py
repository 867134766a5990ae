"""The dihedral symmetries of the board, for training-data augmentation and symmetric evaluation.

A transform is an id ``k`` in 0..7 made of three bits, applied in this order to the last two axes
``(H, W)`` of an array:

* bit 2 (4): transpose (swap rows and columns; H x W becomes W x H),
* bit 1 (2): flip vertically (reverse the rows, ``y -> H'-1-y``),
* bit 0 (1): flip horizontally (reverse the columns, ``x -> W'-1-x``).

0 is the identity, 1/2/3 are the mirror images and the 180 degree rotation; 4..7 involve a
transpose (5 and 6 are the 90 degree rotations, 4 and 7 the diagonal mirrors). A rectangular board
has only the 4 transforms that keep its shape (0..3); :func:`symmetry_ids` lists the valid ones.

This is the one numbering of the project: training augmentation (``gomoku_ai.training.model.dihedral``
applies these same transforms to tensors), the opening symmetries of gating and of the tournament schedule
(whose ``transform`` field in ``results.jsonl`` is such an id) all use it.

A policy vector is flat, row-major (``m = y * W + x``, as in :class:`~gomoku_ai.board.Board`).
:func:`transform_policy` moves probability mass exactly as :func:`transform_planes` moves input
squares, so ``(transform_planes(x, k), transform_policy(p, k, H, W))`` is a consistent training
pair; :func:`move_permutation` gives the same mapping for single move indices.
"""
from __future__ import annotations

import functools
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np

NUM_SYMMETRIES = 8
HALF_TURN = 3   #: the 180 degree rotation (both flips): with the identity, all a W x H board keeps
_INVERSE = (0, 1, 2, 3, 4, 6, 5, 7)


def symmetry_ids(height: int, width: int) -> Tuple[int, ...]:
    """The transforms valid for a ``width`` x ``height`` board: all 8 if square, else 0..3."""
    return tuple(range(8)) if height == width else (0, 1, 2, 3)


def inverse(k: int) -> int:
    """The transform that undoes ``k`` (5 and 6 are each other's inverse; the rest self-inverse)."""
    return _INVERSE[k]


def transformed_shape(k: int, height: int, width: int) -> Tuple[int, int]:
    """(H', W') after transform ``k``."""
    return (width, height) if k & 4 else (height, width)


def transform_planes(x: np.ndarray, k: int) -> np.ndarray:
    """Apply transform ``k`` to the last two axes (H, W) of ``x`` (e.g. (P, H, W) or (N, P, H, W));
    returns a new contiguous array."""
    if not 0 <= k < 8:
        raise ValueError(f"symmetry id {k} is not in 0..7")
    if k & 4:
        x = np.swapaxes(x, -1, -2)
    if k & 2:
        x = x[..., ::-1, :]
    if k & 1:
        x = x[..., :, ::-1]
    return np.ascontiguousarray(x)


def transform_policy(p: np.ndarray, k: int, height: int, width: int) -> np.ndarray:
    """Apply transform ``k`` to flat policy vector(s) ``p`` of shape (..., H*W) of a board with
    ``height`` rows and ``width`` columns; the result is flat for the transformed board."""
    p = np.asarray(p)
    if p.shape[-1] != height * width:
        raise ValueError(f"policy length {p.shape[-1]} != {height}*{width}")
    lead = p.shape[:-1]
    g = transform_planes(p.reshape(lead + (height, width)), k)
    return g.reshape(lead + (height * width,))


def untransform_policy(p: np.ndarray, k: int, height: int, width: int) -> np.ndarray:
    """Map a policy computed on the ``k``-transformed board back to the original board, whose size
    is ``height`` x ``width`` (for averaging a network over symmetries)."""
    h2, w2 = transformed_shape(k, height, width)
    return transform_policy(p, inverse(k), h2, w2)


@functools.lru_cache(maxsize=64)
def untransform_index(k: int, height: int, width: int) -> np.ndarray:
    """``idx`` such that ``p[..., idx]`` is :func:`untransform_policy` of ``p`` (the same values,
    one gather; cached per transform and board, read-only): ``idx[m]`` is the index, on the
    ``k``-transformed board, of the original square ``m``."""
    idx = move_permutation(k, height, width)
    idx.setflags(write=False)
    return idx


def source_squares(k: int, height: int, width: int) -> np.ndarray:
    """``src[j]`` = the original square (flat index) that transform ``k`` moves to square ``j`` of the
    transformed board: ``transform_planes(x, k)`` is ``x`` flattened over (H, W), indexed by ``src``."""
    return transform_planes(np.arange(height * width).reshape(height, width), k).reshape(-1)


def move_permutation(k: int, height: int, width: int) -> np.ndarray:
    """``perm[m]`` = index on the transformed board of the square that is ``m`` on the original."""
    src = source_squares(k, height, width)
    perm = np.empty_like(src)
    perm[src] = np.arange(src.size)  # src[j] is the original square now at j
    return perm


def transform_move(m: int, k: int, height: int, width: int) -> int:
    """The index of move ``m`` after transform ``k`` (see :func:`move_permutation`)."""
    x, y = m % width, m // width
    if k & 4:
        x, y = y, x
        height, width = width, height
    if k & 2:
        y = height - 1 - y
    if k & 1:
        x = width - 1 - x
    return y * width + x


Augmented = Tuple[int, np.ndarray, Optional[np.ndarray]]


def augment(x: np.ndarray, policy: Optional[np.ndarray] = None,
            ids: Optional[Sequence[int]] = None) -> Iterator[Augmented]:
    """Yield ``(k, x_k, policy_k)`` for every valid transform (or those in ``ids``) of a (P, H, W)
    (or (N, P, H, W)) input and its flat (H*W,) (or (N, H*W)) policy target (None passes
    through)."""
    h, w = x.shape[-2:]
    for k in (symmetry_ids(h, w) if ids is None else ids):
        if (k & 4) and h != w:
            raise ValueError(f"transform {k} changes the shape of a {w}x{h} board")
        yield k, transform_planes(x, k), (None if policy is None
                                          else transform_policy(policy, k, h, w))


def all_transforms(x: np.ndarray) -> List[np.ndarray]:
    """Every valid transform of a (P, H, W) input, in :func:`symmetry_ids` order."""
    h, w = x.shape[-2:]
    return [transform_planes(x, k) for k in symmetry_ids(h, w)]
