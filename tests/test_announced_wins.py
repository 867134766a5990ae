"""benchmarks/announced_wins.py: the games a player lost, the move where the winner announced its win, and
what our solver and root made of it (on a hand-made game: an open three left unanswered)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import announced_wins as aw  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402

# Black (the opponent) builds an open three on row 7; White ("ours") plays on the edge at ply 5, and
# Black announces its win with the open four at ply 6.
MOVES = [[7, 7], [0, 0], [8, 7], [0, 2], [6, 7], [0, 4], [9, 7], [0, 6], [10, 7]]


def _game(n: int, black: str, white: str, winner: str, comments: dict) -> dict:
    return {"game": n, "black": black, "white": white, "winner": winner, "moves": MOVES,
            "opening_plies": 0, "comments": comments}


def _folder(tmp_path: Path) -> Path:
    rows = [
        _game(0, "aiwine", "ours", "black", {"2": "val=35", "6": "VCF success! win point[9, 7]"}),
        _game(1, "aiwine", "ours", "black", {"4": "val=100000"}),      # ply 4 is Black's: announced there
        _game(2, "ours", "aiwine", "black", {"6": "VCT success"}),    # we won: not listed
        _game(3, "aiwine", "ours", "black", {"5": "VCT success"}),    # ply 5 is ours: no announcement
        _game(4, "aiwine", "ours", "draw", {}),
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_lost_games_and_the_announcing_move(tmp_path: Path) -> None:
    lost = aw.lost_games(_folder(tmp_path), "ours")
    assert [g["game"] for g in lost] == [0, 1, 3]
    assert [aw.announcement(g, "ours") for g in lost] == [6, 4, None]
    assert aw.ANNOUNCED.search("Speed 1143K | Eval +M7 | Node 50K") is not None
    assert aw.ANNOUNCED.search("val=1000001") is None


def test_the_position_is_read_and_the_threat_seen(tmp_path: Path, capsys) -> None:
    out = tmp_path / "aw.json"
    assert aw.main([str(_folder(tmp_path)), "--player", "ours", "--budgets", "0.5", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    first = data["rows"][0]
    # before our ply-5 move Black already had an open three: the root saw the threat, limited the
    # search to the moves that stop it, and the edge move was not one of them; after it, our VCT
    # finds Black's win at once
    assert first["game"] == 0 and first["ply"] == 6 and first["played"] == Board(15).move_name(4 * 15 + 0)
    assert first["root"] == "threatened" and first["restricted"] >= 2 and first["played_kept"] is False
    assert first["found_s"] == 0.5
    assert data["summary"]["lost"] == 3 and data["summary"]["announced"] == 2


def test_the_board_is_the_tournaments(tmp_path: Path) -> None:
    """A 20x20 tournament's moves are read on a 20x20 board (a 15x15 default would misplace them)."""
    (tmp_path / "tournament.json").write_text(json.dumps({"width": 20, "height": 20, "rule": "standard"}))
    b = aw.board_of(tmp_path)
    assert (b.width, b.height, b.rule.name) == (20, 20, "STANDARD")
    assert aw.board_of(tmp_path / "missing").width == 15


def test_holding_counts_the_moves_not_refuted_before_the_losing_one(tmp_path: Path) -> None:
    """``--holding``: before our ply-5 move only the two ends of Black's open three, (5, 7) and (9, 7),
    stop it; every other near move loses to the open four."""
    out = tmp_path / "aw.json"
    assert aw.main([str(_folder(tmp_path)), "--player", "ours", "--budgets", "0.5", "--holding", "30",
                    "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    first = data["rows"][0]
    assert first["all_checked"] is True and first["near"] > 20
    assert first["not_refuted"] == 2
    assert first["played_holds"] == [False, False]      # the edge move leaves the open three
    assert data["summary"]["every_move_refuted"] == 0
