"""A player's score opening by opening, as Black and as White, over any number of tournament runs:
which openings lose the games. Prints one JSON object (``--table``: a Markdown table instead).

    .venv/bin/python benchmarks/opening_scores.py --player ours runs/s41/aiwine-20-base-4111 \\
        benchmarks/results/s40/aiwine-20-new-1401-results.jsonl.xz [more runs] [--table]

Each argument is a tournament folder or a results file (plain, or xz when its name ends in ``.xz``,
as kept in ``benchmarks/results/``). Rows are the openings (the ``opening`` index of the results,
0-based lines of the tournament's openings file; the board transforms of ``--transform`` are pooled),
worst score first: games and points as Black and as White, the points lost (a draw loses half).
Runs of one openings file only belong together: the indices say nothing about which file.

With ``--openings FILE --worst K --write OUT``, the K openings that lost the most points are written
to OUT (their lines of FILE, the tournament's openings file, most points lost first) for
screening matches on the openings that decide the score. Such a sample measures a change where the
score is made, but only a match on the whole file can show that nothing is lost elsewhere.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_io import player_points, read_results, results_path  # noqa: E402


def opening_rows(runs: Sequence[Path], player: str) -> List[Dict[str, Any]]:
    """One row per opening index played by ``player`` in ``runs``: ``opening``, ``black_games``,
    ``black_points``, ``white_games``, ``white_points``, ``games``, ``score`` (points / games) and
    ``lost`` (games - points); worst score first (then most points lost, then the index). A run in
    which ``player`` plays no game, or a row that is not a game result, is refused (SystemExit)
    naming the file."""
    acc: Dict[int, List[float]] = {}
    for run in runs:
        path = results_path(run)
        played = 0
        for n, r in enumerate(read_results(run), 1):
            try:
                mine = player_points(r, player)
                if mine is None:
                    continue
                colour, pts = mine
                row = acc.setdefault(int(r["opening"]), [0, 0.0, 0, 0.0])
            except (ValueError, KeyError, TypeError) as e:
                raise SystemExit(f"{path}, game row {n}: not a game result ({e})")
            k = 0 if colour == "black" else 2
            row[k] += 1
            row[k + 1] += pts
            played += 1
        if not played:
            raise SystemExit(f"{path}: {player!r} plays no game there")
    rows = []
    for op, (bg, bp, wg, wp) in acc.items():
        games, points = bg + wg, bp + wp
        rows.append({"opening": op, "black_games": int(bg), "black_points": bp, "white_games": int(wg),
                     "white_points": wp, "games": int(games), "score": round(points / games, 4),
                     "lost": games - points})
    rows.sort(key=lambda r: (r["score"], -r["lost"], r["opening"]))
    return rows


def worst_lines(rows: List[Dict[str, Any]], openings: Path, k: int) -> List[str]:
    """The lines of ``openings`` (the tournament's openings file, blank lines and ``#`` comments
    skipped as :func:`gomoku_ai.records.read_openings` skips them) of the ``k`` openings that lost
    the most points, most first (ties: the worse score, then the lower index); openings that lost
    nothing are never chosen. An index past the file's end is refused (SystemExit)."""
    try:
        text = openings.read_text()
    except OSError as e:
        raise SystemExit(f"{openings}: cannot read the openings file ({e})")
    lines = [body.strip() for body in (ln.split("#", 1)[0] for ln in text.splitlines()) if body.strip()]
    chosen = sorted((r for r in rows if r["lost"] > 0),
                    key=lambda r: (-r["lost"], r["score"], r["opening"]))[:k]
    out = []
    for r in chosen:
        if r["opening"] >= len(lines):
            raise SystemExit(f"{openings}: has {len(lines)} openings, the results name opening "
                             f"{r['opening']} (another openings file?)")
        out.append(lines[r["opening"]])
    return out


def markdown(rows: List[Dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    out = ["| opening | games | score | as Black | as White | points lost |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['opening']} | {r['games']} | {100 * r['score']:.1f} % | "
                   f"{r['black_points']:g}/{r['black_games']} | {r['white_points']:g}/{r['white_games']} | "
                   f"{r['lost']:g} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="tournament folders or results files")
    ap.add_argument("--player", required=True, help="the player whose score is counted")
    ap.add_argument("--table", action="store_true", help="a Markdown table instead of JSON")
    ap.add_argument("--openings", type=Path, help="the tournament's openings file (for --write)")
    ap.add_argument("--worst", type=int, default=0, help="with --write: this many openings")
    ap.add_argument("--write", type=Path, help="write the worst openings' lines here")
    a = ap.parse_args(argv)
    if a.write is not None and (a.openings is None or a.worst <= 0):
        ap.error("--write needs --openings and --worst K (K >= 1)")
    rows = opening_rows(a.runs, a.player)
    if a.write is not None:
        assert a.openings is not None
        lines = worst_lines(rows, a.openings, a.worst)
        a.write.write_text("".join(s + "\n" for s in lines))
    if a.table:
        print(markdown(rows))
    else:
        total = sum(r["games"] for r in rows)
        points = sum(r["black_points"] + r["white_points"] for r in rows)
        print(json.dumps({"player": a.player, "runs": [str(p) for p in a.runs], "games": total,
                          "score": round(points / total, 4) if total else None, "openings": rows},
                         indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
