"""Reading a tournament's per-game results for the analysis scripts in ``benchmarks/``: a tournament
folder (its ``results.jsonl``) or a results file kept in ``benchmarks/results/`` (plain, or xz-compressed
when its name ends in ``.xz``)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tools.tournament.results import ResultsFormatError, read_rows  # noqa: E402


def results_path(folder: Path) -> Path:
    """``folder`` itself when it is a file, else its ``results.jsonl``."""
    return folder if folder.is_file() else folder / "results.jsonl"


def read_results(folder: Path) -> List[Dict[str, Any]]:
    """Every game row of a tournament folder or results file (see :func:`results_path`), in file
    order (:func:`tools.tournament.results.read_rows`); a file that cannot be read, or a line that is
    not a JSON object, is refused (SystemExit) with the file and line."""
    path = results_path(folder)
    if not path.is_file():
        raise SystemExit(f"{path}: no results.jsonl (not a tournament folder?)")
    try:
        return read_rows(path)
    except ResultsFormatError as e:
        raise SystemExit(str(e))


def lost_by(rows: List[Dict[str, Any]], player: str) -> List[Dict[str, Any]]:
    """The game rows that ``player`` played and lost (decided games only: not draws or unfinished)."""
    return [g for g in rows if player in (g.get("black"), g.get("white")) and
            g.get("winner") in ("black", "white") and g[g["winner"]] != player]


def player_points(row: Dict[str, Any], player: str) -> Optional[Tuple[str, float]]:
    """``(colour, points)`` of ``player`` in one game row (:func:`colour_points` of its ``black``,
    ``white`` and ``winner``). A row without the fields raises KeyError (the callers name the file
    and row)."""
    return colour_points(row["black"], row["white"], row["winner"], player)


def colour_points(black: str, white: str, winner: Optional[str],
                  player: str) -> Optional[Tuple[str, float]]:
    """``(colour, points)`` of ``player`` in a game between ``black`` and ``white`` that ``winner``
    ("black", "white", "draw" or None) won: its colour and its score (1, 0.5 for a draw or no winner,
    0); None when it did not play that game."""
    colour = "black" if black == player else "white" if white == player else None
    if colour is None:
        return None
    return colour, 0.5 if winner in (None, "draw") else 1.0 if winner == colour else 0.0
