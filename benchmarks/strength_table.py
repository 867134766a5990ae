"""Strength table (Markdown) and curve (PNG) from finished ``gomoku tournament`` folders.

    .venv/bin/python benchmarks/strength_table.py --player ours runs/t/curve15 [more folders] \\
        [--curve rapfi10k=10000,rapfi30k=30000,rapfi100k=100000,rapfi300k=300000] \\
        [--png docs/strength-curve.png]

For every pairing of ``--player`` in the folders' ``summary.json``: the opponent, games, W-D-L,
the score, the Elo difference with its 95 % interval from the pentanomial statistics of
colour-swapped pairs (the trinomial where a pairing has no complete pair), as the tournament
computed them, and the points as Black and as White (two-player matches; ``-`` otherwise). ``--curve`` maps opponent names to node counts: those rows are also drawn as the
strength curve (score of ``--player`` against the opponent's nodes, log axis, 95 % intervals) with
matplotlib's Agg backend. ``--rows FILE`` adds rows kept from earlier runs as a Markdown table in this
script's format (placed first), for when their folders are gone. Prints the table; with ``--json`` one
JSON object instead.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Dict, List


def rows_for(player: str, folders: List[str]) -> List[Dict[str, Any]]:
    """One row per pairing of ``player`` (later folders add rows; a repeated opponent is summed
    only as separate rows, never merged)."""
    out: List[Dict[str, Any]] = []
    for folder in folders:
        path = Path(folder) / "summary.json"
        try:
            s = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise SystemExit(f"{path}: cannot read a tournament summary ({e})")
        names = s["names"]
        for pr in s["pairings"]:
            a, b = names[pr["a"]], names[pr["b"]]
            if player not in (a, b):
                continue
            flip = b == player
            w, d, l = pr["w"], pr["d"], pr["l"]
            if flip:
                w, l = l, w
            st = pr.get("pentanomial") if pr.get("pairs") else None
            st = st or pr["trinomial"]
            elo, lo, hi = st["elo"], st["elo_lo"], st["elo_hi"]
            if flip:
                elo, lo, hi = -elo, -hi, -lo
            n = w + d + l
            # by colour: a player's own record by colour is the pairing's in a two-player match
            colours: Dict[str, Any] = {"black": None, "white": None}
            if len(names) == 2:
                me = next(p for p in s["players"] if p["name"] == player)
                for c in colours:
                    rec = me.get(c)
                    if rec:
                        colours[c] = (rec["w"] + 0.5 * rec["d"], rec["w"] + rec["d"] + rec["l"])
            out.append({"opponent": a if flip else b, "games": n, "w": w, "d": d, "l": l,
                        "as_black": colours["black"], "as_white": colours["white"],
                        "score": (w + 0.5 * d) / n if n else float("nan"),
                        "elo": elo, "elo_lo": lo, "elo_hi": hi, "folder": str(folder),
                        "stats": "pentanomial" if pr.get("pairs") else "trinomial"})
    return out


_MD_ROW = re.compile(
    r"^\|\s*(?P<opp>[^|]+?)\s*\|\s*(?P<games>\d+)\s*\|\s*(?P<w>\d+)-(?P<d>\d+)-(?P<l>\d+)\s*\|"
    r"\s*[\d.]+\s*%\s*\|\s*(?P<elo>[+-]?\d+)\s*\[(?P<lo>[+-]?\d+),\s*(?P<hi>[+-]?\d+)\]\s*\|"
    r"\s*(?P<b>[^|]+?)\s*\|\s*(?P<wh>[^|]+?)\s*\|\s*$")


def rows_from_markdown(path: str) -> List[Dict[str, Any]]:
    """Rows of a Markdown table as :func:`markdown` prints it (header and separator lines, and lines
    outside the table, are skipped): for drawing the curve again when an earlier run's folder is
    gone but its row was kept. A line that starts like a row but does not parse is refused, naming
    the file and line."""
    def colour(text: str) -> Any:
        if text == "-":
            return None
        pts, _, n = text.partition("/")
        return (float(pts), int(n))

    out: List[Dict[str, Any]] = []
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise SystemExit(f"{path}: cannot read the rows ({e})")
    for k, line in enumerate(lines, 1):
        if not line.startswith("|") or line.startswith("| opponent") or line.startswith("|---"):
            continue
        m = _MD_ROW.match(line)
        if m is None:
            raise SystemExit(f"{path}, line {k}: not a row of the strength table: {line!r}")
        w, d, l = int(m["w"]), int(m["d"]), int(m["l"])
        n = int(m["games"])
        out.append({"opponent": m["opp"], "games": n, "w": w, "d": d, "l": l,
                    "as_black": colour(m["b"]), "as_white": colour(m["wh"]),
                    "score": (w + 0.5 * d) / n if n else float("nan"),
                    "elo": float(m["elo"]), "elo_lo": float(m["lo"]), "elo_hi": float(m["hi"]),
                    "folder": f"{path}:{k}", "stats": "from a table"})
    return out


def _fmt(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:+.0f}"


def _points(rec: Any) -> str:
    """``points/games`` of a (points, games) pair, ``-`` when unknown."""
    if not rec:
        return "-"
    pts, n = rec
    return f"{pts:g}/{n}"


def markdown(rows: List[Dict[str, Any]]) -> str:
    lines = ["| opponent | games | W-D-L | score | Elo (95 %) | as Black | as White |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['opponent']} | {r['games']} | {r['w']}-{r['d']}-{r['l']} | "
                     f"{100 * r['score']:.1f}% | {_fmt(r['elo'])} [{_fmt(r['elo_lo'])}, "
                     f"{_fmt(r['elo_hi'])}] | {_points(r.get('as_black'))} | "
                     f"{_points(r.get('as_white'))} |")
    return "\n".join(lines)


def plot(rows: List[Dict[str, Any]], curve: Dict[str, int], out: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    pts = sorted((curve[r["opponent"]], r) for r in rows if r["opponent"] in curve)
    if not pts:
        raise SystemExit("no row matches --curve")
    xs = [p[0] for p in pts]
    sc = [100 * p[1]["score"] for p in pts]
    err = []
    for _, r in pts:       # a binomial 95 % interval of the score, for the error bars
        n = max(r["games"], 1)
        s = r["score"]
        e = 1.96 * math.sqrt(max(s * (1 - s), 0.25 / n) / n)
        err.append(100 * e)
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=110)
    ax.errorbar(xs, sc, yerr=err, marker="o", capsize=4)
    ax.axhline(50, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log")
    ax.set_xlabel("Rapfi nodes per move (INFO max_node)")
    ax.set_ylabel("our score (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    for x, y, (_, r) in zip(xs, sc, pts):
        ax.annotate(f"{r['games']} g", (x, y), textcoords="offset points", xytext=(6, 6),
                    fontsize=8)
    fig.tight_layout()
    fig.savefig(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="*")
    ap.add_argument("--player", required=True)
    ap.add_argument("--rows", action="append", default=[],
                    help="a Markdown file of earlier rows as this script prints them (first; repeatable)")
    ap.add_argument("--curve", default="", help="NAME=NODES,... rows drawn as the curve")
    ap.add_argument("--png", default=None)
    ap.add_argument("--title", default="ours at 1 s/move vs Rapfi (classical) by nodes")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    if not a.folders and not a.rows:
        ap.error("give tournament folders, --rows files, or both")
    rows = [r for f in a.rows for r in rows_from_markdown(f)] + rows_for(a.player, a.folders)
    if a.json:
        print(json.dumps(rows, indent=2))
    else:
        print(markdown(rows))
    if a.png:
        curve = {}
        for item in filter(None, a.curve.split(",")):
            k, _, v = item.partition("=")
            curve[k] = int(v)
        plot(rows, curve, a.png, a.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
