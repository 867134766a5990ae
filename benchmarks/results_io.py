"""Reading a tournament's per-game results for the analysis scripts in ``benchmarks/``: a tournament
folder (its ``results.jsonl``) or a results file kept in ``benchmarks/results/`` (plain, or xz-compressed
when its name ends in ``.xz``)."""
from __future__ import annotations

import json
import lzma
from pathlib import Path
from typing import Any, Dict, List


def results_path(folder: Path) -> Path:
    """``folder`` itself when it is a file, else its ``results.jsonl``."""
    return folder if folder.is_file() else folder / "results.jsonl"


def read_text(path: Path) -> str:
    """The text of a results file, through xz when its name ends in ``.xz``. Refuses (SystemExit
    naming the file) a missing, undecodable or unreadable file."""
    if not path.is_file():
        raise SystemExit(f"{path}: no results.jsonl (not a tournament folder?)")
    try:
        return lzma.decompress(path.read_bytes()).decode() if path.suffix == ".xz" else path.read_text()
    except (OSError, lzma.LZMAError, UnicodeDecodeError) as e:
        raise SystemExit(f"{path}: not a readable results file ({e})")


def read_results(folder: Path) -> List[Dict[str, Any]]:
    """Every game row of a tournament folder or results file (see :func:`results_path`), in file
    order; a line that is not a JSON object is refused with the file and line."""
    path = results_path(folder)
    rows = []
    for n, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise SystemExit(f"{path}, line {n}: not a game result ({e})")
        if not isinstance(row, dict):
            raise SystemExit(f"{path}, line {n}: not a game result (not an object)")
        rows.append(row)
    return rows


def lost_by(rows: List[Dict[str, Any]], player: str) -> List[Dict[str, Any]]:
    """The game rows that ``player`` played and lost (decided games only: not draws or unfinished)."""
    return [g for g in rows if player in (g.get("black"), g.get("white")) and
            g.get("winner") in ("black", "white") and g[g["winner"]] != player]
