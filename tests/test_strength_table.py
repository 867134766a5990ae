"""benchmarks/strength_table.py: rows, by-colour points and the Markdown table from tournament summaries."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import strength_table as stt  # noqa: E402


def _summary(names, players, pairings):
    return {"names": names, "players": players, "pairings": pairings}


def _stats(elo, lo, hi):
    return {"elo": elo, "elo_lo": lo, "elo_hi": hi}


def test_rows_from_the_players_side_with_colours(tmp_path: Path) -> None:
    """The row is seen from ``--player`` whichever side of the pairing it is on; a two-player match
    gives its points by colour, a larger tournament does not (a player's colour record spans pairings)."""
    match = tmp_path / "match"
    match.mkdir()
    (match / "summary.json").write_text(json.dumps(_summary(
        ["rapfi", "ours"],
        [{"name": "rapfi", "black": {"w": 5, "d": 0, "l": 0}, "white": {"w": 3, "d": 1, "l": 1}},
         {"name": "ours", "black": {"w": 1, "d": 1, "l": 3}, "white": {"w": 0, "d": 0, "l": 5}}],
        [{"a": 0, "b": 1, "w": 8, "d": 1, "l": 1, "pairs": 5, "pentanomial": _stats(200.0, 100.0, 320.0),
          "trinomial": _stats(190.0, 90.0, 330.0)}])))
    league = tmp_path / "league"
    league.mkdir()
    (league / "summary.json").write_text(json.dumps(_summary(
        ["ours", "a", "b"],
        [{"name": "ours", "black": {"w": 2, "d": 0, "l": 0}, "white": {"w": 1, "d": 0, "l": 1}},
         {"name": "a"}, {"name": "b"}],
        [{"a": 0, "b": 1, "w": 2, "d": 0, "l": 0, "pairs": 0, "trinomial": _stats(300.0, 10.0, 900.0)},
         {"a": 1, "b": 2, "w": 1, "d": 0, "l": 1, "pairs": 1, "pentanomial": _stats(0.0, -1.0, 1.0),
          "trinomial": _stats(0.0, -1.0, 1.0)}])))
    rows = stt.rows_for("ours", [str(match), str(league)])
    assert len(rows) == 2
    r = rows[0]
    assert (r["opponent"], r["w"], r["d"], r["l"]) == ("rapfi", 1, 1, 8)
    assert (r["elo"], r["elo_lo"], r["elo_hi"], r["stats"]) == (-200.0, -320.0, -100.0, "pentanomial")
    assert r["as_black"] == (1.5, 5) and r["as_white"] == (0.0, 5)
    assert rows[1]["opponent"] == "a" and rows[1]["stats"] == "trinomial"
    assert rows[1]["as_black"] is None and rows[1]["as_white"] is None
    md = stt.markdown(rows).splitlines()
    assert md[0].endswith("| as Black | as White |")
    assert md[2] == "| rapfi | 10 | 1-1-8 | 15.0% | -200 [-320, -100] | 1.5/5 | 0/5 |"
    assert md[3].endswith("| - | - |")


def test_rows_read_back_from_the_printed_table(tmp_path: Path) -> None:
    """``--rows``: a table the script printed is read back to the same rows (for the curve when a run's
    folder is gone); lines outside the table are skipped, a broken row is refused with its file and line."""
    rows = [{"opponent": "rapfi10k", "games": 100, "w": 64, "d": 1, "l": 35, "as_black": (41.0, 50),
             "as_white": (23.5, 50), "score": 0.645, "elo": 104.0, "elo_lo": 38.0, "elo_hi": 177.0},
            {"opponent": "aiwine", "games": 10, "w": 2, "d": 0, "l": 8, "as_black": None, "as_white": None,
             "score": 0.2, "elo": -241.0, "elo_lo": -500.0, "elo_hi": -20.0}]
    f = tmp_path / "rows.md"
    f.write_text("Kept from session 14.\n\n" + stt.markdown(rows) + "\n\nmore text\n")
    back = stt.rows_from_markdown(str(f))
    keys = ("opponent", "games", "w", "d", "l", "as_black", "as_white", "elo", "elo_lo", "elo_hi")
    assert [{k: r[k] for k in keys} for r in back] == [{k: r[k] for k in keys} for r in rows]
    assert [r["score"] for r in back] == [0.645, 0.2]
    assert stt.markdown(back) == stt.markdown(rows)
    f.write_text(stt.markdown(rows) + "\n| rapfi | 100 | 64-1 | 64% | +1 [0, 2] | - | - |\n")
    with pytest.raises(SystemExit, match=r"rows.md, line 5: not a row"):
        stt.rows_from_markdown(str(f))
    with pytest.raises(SystemExit, match="cannot read the rows"):
        stt.rows_from_markdown(str(tmp_path / "missing.md"))
