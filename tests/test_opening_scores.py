"""benchmarks/opening_scores.py: a player's score opening by opening, and the openings that lose."""
from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import opening_scores  # noqa: E402

Game = Tuple[int, str, Optional[str]]   # (opening, the player's colour, the winner's colour or None)


def _run(folder: Path, games: List[Game], player: str = "A") -> Path:
    folder.mkdir()
    lines = []
    for g, (op, colour, winner) in enumerate(games):
        black, white = (player, "opp") if colour == "black" else ("opp", player)
        lines.append(json.dumps({"game": g, "pair": g // 2, "opening": op, "black": black,
                                 "white": white, "winner": winner, "result": "?"}))
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_rows_count_each_colour_and_put_the_worst_opening_first(tmp_path: Path) -> None:
    a = _run(tmp_path / "a", [(0, "black", "black"), (0, "white", "black"),    # opening 0: 1 of 2
                              (1, "black", "black"), (1, "white", "white"),    # opening 1: 2 of 2
                              (2, "black", None), (2, "white", "black")])      # opening 2: 0.5 of 2
    b = _run(tmp_path / "b", [(2, "black", "white"), (2, "white", "white")])   # opening 2: 1 of 2
    rows = opening_scores.opening_rows([a, b], "A")
    assert [r["opening"] for r in rows] == [2, 0, 1]
    r2 = rows[0]
    assert (r2["black_games"], r2["black_points"], r2["white_games"], r2["white_points"]) == (2, 0.5, 2, 1.0)
    assert r2["games"] == 4 and r2["score"] == pytest.approx(0.375) and r2["lost"] == pytest.approx(2.5)
    assert rows[1]["score"] == 0.5 and rows[1]["lost"] == 1 and rows[2]["lost"] == 0
    # the other player's view of the same games: every point the other way
    opp = {r["opening"]: r for r in opening_scores.opening_rows([a, b], "opp")}
    assert opp[2]["black_points"] + opp[2]["white_points"] == pytest.approx(4 - 1.5)


def test_worst_openings_are_written_most_points_lost_first(tmp_path: Path) -> None:
    games: List[Game] = [(0, "white", "black")] + [(1, "white", "black")] * 3 + [(2, "black", "black")]
    run = _run(tmp_path / "a", games)
    ops = tmp_path / "openings.txt"
    ops.write_text("# a comment line\n0,0, 1,1\n\n0,0, 1,0  # trailing comment\n0,0, 2,2\n")
    out = tmp_path / "worst.txt"
    assert opening_scores.main(["--player", "A", str(run), "--openings", str(ops), "--worst", "5",
                                "--write", str(out)]) == 0
    # opening 1 lost 3, opening 0 lost 1; opening 2 lost nothing and is not written
    assert out.read_text() == "0,0, 1,0\n0,0, 1,1\n"
    one = opening_scores.worst_lines(opening_scores.opening_rows([run], "A"), ops, 1)
    assert one == ["0,0, 1,0"]


def test_xz_results_files_read_as_the_plain_ones(tmp_path: Path) -> None:
    plain = _run(tmp_path / "a", [(0, "black", "white"), (3, "white", "white")])
    packed = tmp_path / "a-results.jsonl.xz"
    packed.write_bytes(lzma.compress((plain / "results.jsonl").read_bytes()))
    assert opening_scores.opening_rows([packed], "A") == opening_scores.opening_rows([plain], "A")


def test_bad_input_is_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path / "a", [(0, "black", "black")])
    with pytest.raises(SystemExit, match="'B' plays no game"):
        opening_scores.opening_rows([run], "B")
    bad = tmp_path / "b"
    bad.mkdir()
    (bad / "results.jsonl").write_text(json.dumps({"game": 0, "black": "A", "white": "x"}) + "\n")
    with pytest.raises(SystemExit, match=r"results.jsonl, game row 1: not a game result"):
        opening_scores.opening_rows([bad], "A")
    short = tmp_path / "short.txt"
    short.write_text("0,0\n")
    rows = opening_scores.opening_rows([_run(tmp_path / "c", [(4, "white", "black")])], "A")
    with pytest.raises(SystemExit, match="has 1 openings, the results name opening 4"):
        opening_scores.worst_lines(rows, short, 1)
    with pytest.raises(SystemExit):
        opening_scores.main(["--player", "A", str(run), "--write", str(tmp_path / "w.txt")])
    assert "--write needs --openings" in capsys.readouterr().err


def test_the_table_has_one_line_per_opening(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path / "a", [(0, "black", "black"), (0, "white", None), (7, "white", "black")])
    assert opening_scores.main(["--player", "A", "--table", str(run)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "| 7 | 1 | 0.0 % | 0/0 | 0/1 | 1 |"
    assert lines[3] == "| 0 | 2 | 75.0 % | 1/1 | 0.5/1 | 0.5 |"
    assert len(lines) == 4
