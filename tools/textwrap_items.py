"""Greedy line filling for items that must not be split (PGN tokens, ``12. h8 i9`` move pairs).

:func:`textwrap.wrap` splits on every space, so an item that contains one ("12. h8 i9") could be
cut in the middle; this packs whole items instead.
"""
from __future__ import annotations

from typing import Iterable, List


def pack(items: Iterable[str], width: int, sep: str = " ") -> List[str]:
    """Lines of at most ``width`` characters, each the next items joined by ``sep``; an item
    longer than ``width`` gets a line of its own."""
    lines: List[str] = []
    cur = ""
    for item in items:
        if cur and len(cur) + len(sep) + len(item) > width:
            lines.append(cur)
            cur = item
        else:
            cur = f"{cur}{sep}{item}" if cur else item
    if cur:
        lines.append(cur)
    return lines
