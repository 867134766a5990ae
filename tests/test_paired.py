"""benchmarks/paired.py: two runs on the same seed compared game by game, from the colour-swapped pairs."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import paired  # noqa: E402


def _run(folder: Path, player: str, winners: List[Optional[str]]) -> Path:
    """A results.jsonl of len(winners) games: ``player`` Black in even games and White in odd ones
    (colour-swapped pairs), against "opp"; each winner is "black", "white" or None (a draw)."""
    folder.mkdir()
    lines = []
    for g, w in enumerate(winners):
        black, white = (player, "opp") if g % 2 == 0 else ("opp", player)
        lines.append(json.dumps({"game": g, "pair": g // 2, "black": black, "white": white,
                                 "winner": w, "result": "?"}))
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_differences_pair_by_game_and_count_only_common_games(tmp_path: Path) -> None:
    # A (Black in even games): 1, 0, 0.5, 0, 1 in games 0-4
    a = paired.scores(_run(tmp_path / "a", "A", ["black", "black", None, "black", "black"]), "A")
    # B: 1, 0, 0, 1, 0.5 in games 0-4, and game 5 (0), which A did not play
    b = paired.scores(_run(tmp_path / "b", "B", ["black", "black", "white", "white", None, "black"]), "B")
    assert a[1] == (0, 0.0) and a[2] == (1, 0.5) and a[4] == (2, 1.0)
    assert paired.scores(tmp_path / "a" / "results.jsonl", "A") == a     # the file itself will do
    assert b[2] == (1, 0.0) and b[3] == (1, 1.0) and b[4] == (2, 0.5) and b[5] == (2, 0.0)
    out = paired.compare(a, b)
    # per game A - B: 0, 0, +0.5, -1, +0.5; per pair: 0, -0.25, +0.5 (pair 2 has one common game)
    assert out["games"] == 5 and out["pairs"] == 3 and out["same_result"] == 2
    assert out["diff_per_game"] == pytest.approx(0.25 / 3, abs=1e-4)
    lo, hi = out["ci95"]
    assert lo < out["diff_per_game"] < hi
    assert out["score_a"] == pytest.approx(0.5) and out["score_b"] == pytest.approx(0.5)


def test_identical_runs_differ_by_zero_with_a_zero_interval(tmp_path: Path) -> None:
    w = ["black", "white", None, "black"]
    out = paired.compare(paired.scores(_run(tmp_path / "a", "A", w), "A"),
                         paired.scores(_run(tmp_path / "b", "A", w), "A"))
    assert out["diff_per_game"] == 0.0 and out["ci95"] == [0.0, 0.0] and out["same_result"] == 4


def test_xz_results_files_read_as_the_plain_ones(tmp_path: Path) -> None:
    import lzma
    plain = _run(tmp_path / "a", "A", ["black", "white", None, "black"])
    packed = tmp_path / "a-results.jsonl.xz"
    packed.write_bytes(lzma.compress((plain / "results.jsonl").read_bytes()))
    assert paired.scores(packed, "A") == paired.scores(plain, "A")
    broken = tmp_path / "b-results.jsonl.xz"
    broken.write_bytes(b"not xz at all")
    with pytest.raises(SystemExit, match="b-results.jsonl.xz: not a readable results file"):
        paired.scores(broken, "A")


def test_bad_folders_are_refused_with_their_name(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no results.jsonl"):
        paired.scores(tmp_path, "A")
    (tmp_path / "results.jsonl").write_text('{"game": 0}\n')
    with pytest.raises(SystemExit, match="game row 1: not a game result"):
        paired.scores(tmp_path, "A")
    _run(tmp_path / "c", "A", ["black"])
    with pytest.raises(SystemExit, match="no game of 'Z'"):
        paired.scores(tmp_path / "c", "Z")
    with pytest.raises(SystemExit, match="expected FOLDER:PLAYER"):
        paired.main([str(tmp_path / "c"), str(tmp_path / "c") + ":A"])


def test_several_comparisons_pool_their_pairs(tmp_path: Path, capsys) -> None:
    """A1 B1 A2 B2: each comparison as alone, and the pooled one over all their per-pair differences."""
    a1 = _run(tmp_path / "a1", "A", ["black", "black", None, "black"])     # A: 1, 0, 0.5, 0
    b1 = _run(tmp_path / "b1", "B", ["white", "black", "white", "white"])  # B: 0, 0, 0, 1
    a2 = _run(tmp_path / "a2", "A", ["black", "white", "black", "white"])  # A: 1, 1, 1, 1
    b2 = _run(tmp_path / "b2", "B", ["black", "black", "black", "white"])  # B: 1, 0, 1, 1
    assert paired.main([f"{a1}:A", f"{b1}:B", f"{a2}:A", f"{b2}:B"]) == 0
    out = json.loads(capsys.readouterr().out)
    one, two = out["comparisons"]
    assert one == {"a": f"{a1}:A", "b": f"{b1}:B",
                   **paired.compare(paired.scores(a1, "A"), paired.scores(b1, "B"))}
    assert two["diff_per_game"] == pytest.approx(0.25)
    # per pair: (1 + 0) / 2, (0.5 - 1) / 2 | (0 + 1) / 2, (0 + 0) / 2 -> 0.5, -0.25, 0.5, 0
    pooled = out["pooled"]
    assert pooled["games"] == 8 and pooled["pairs"] == 4 and pooled["same_result"] == 4
    assert pooled["diff_per_game"] == pytest.approx(0.1875)
    assert pooled["score_a"] == pytest.approx(5.5 / 8) and pooled["score_b"] == pytest.approx(4 / 8)
    assert pooled["ci95"][0] < 0.1875 < pooled["ci95"][1]
    assert paired.main([f"{a1}:A", f"{b1}:B"]) == 0                     # one comparison: as before
    assert "comparisons" not in json.loads(capsys.readouterr().out)
    with pytest.raises(SystemExit, match="two by two"):
        paired.main([f"{a1}:A", f"{b1}:B", f"{a2}:A"])


@pytest.mark.parametrize("winner,black_points", [("black", 1.0), ("white", 0.0), ("draw", 0.5), (None, 0.5)])
def test_one_scorer_counts_a_game_for_either_side(winner: Optional[str], black_points: float) -> None:
    """``results_io.colour_points`` (what ``player_points`` reads a results row with, and what session
    scripts score a game without a row by): colour and points of either player, None for a third."""
    import results_io
    assert results_io.colour_points("a", "b", winner, "a") == ("black", black_points)
    assert results_io.colour_points("a", "b", winner, "b") == ("white", 1.0 - black_points)
    assert results_io.colour_points("a", "b", winner, "c") is None
    row = {"black": "a", "white": "b", "winner": winner}
    assert results_io.player_points(row, "b") == results_io.colour_points("a", "b", winner, "b")
