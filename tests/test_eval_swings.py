"""benchmarks/eval_swings.py: where lost games turned, from the evaluations the winner printed."""
from __future__ import annotations

import json
import lzma
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import eval_swings as es  # noqa: E402


def _game(n: int, black: str, white: str, winner: str, comments: dict, opening: int = 1) -> dict:
    return {"game": n, "black": black, "white": white, "winner": winner, "opening_plies": opening,
            "comments": comments}


GAMES = [
    # ours White: the opponent (Black) moves at even plies; level at ply 2, a mate at ply 4
    _game(0, "rapfi", "ours", "black", {"0": "Eval 10", "2": "Eval 50 | Node 1K", "4": "Eval +M11"}),
    # ours Black: the opponent at odd plies; 150 then 320 (a drift), a mate later; ply 4 is ours
    _game(1, "ours", "rapfi", "white", {"1": "Eval 20", "3": "Eval 150", "4": "Eval 999",
                                        "5": "Eval 320", "7": "Eval +M5"}, opening=3),
    # decided at its first evaluation; its own lost mate (-M) never counts as decided
    _game(2, "rapfi", "ours", "black", {"4": "Eval 400", "6": "Eval -M4"}, opening=4),
    _game(3, "rapfi", "ours", "black", {}),                                  # lost, nothing printed
    _game(4, "rapfi", "ours", "white", {"0": "Eval 500"}),                   # we won: not a loss
    _game(5, "ours", "rapfi", "white", {"1": "Eval 80", "3": "Eval 120"}),   # lost, never decided
    _game(6, "rapfi", "aiwine", "black", {"0": "Eval 900"}),                 # not our game
]


def test_each_lost_game_is_classified_from_the_opponents_evaluations() -> None:
    rows = {g["game"]: es.swing(g, "ours", 300.0, 100.0) for g in GAMES[:6]}
    assert rows[0] == {"game": 0, "ours": "white", "decided_ply": 4, "after_opening": 3, "kind": "sudden",
                       "before": 50.0, "mate_ply": 4, "mate_in": 11}
    assert rows[1] == {"game": 1, "ours": "black", "decided_ply": 5, "after_opening": 2, "kind": "drift",
                       "before": 150.0, "mate_ply": 7, "mate_in": 5}
    assert rows[2]["kind"] == "first" and rows[2]["decided_ply"] == 4 and rows[2]["mate_ply"] is None
    assert rows[2]["before"] is None and rows[2]["after_opening"] == 0
    # a previous evaluation that was a mate against it (then a blunder of ours) is kept readable
    flip = _game(7, "rapfi", "ours", "black", {"2": "Eval -M9", "4": "Eval +M7"})
    assert es.swing(flip, "ours", 300.0, 100.0)["before"] == "-mate"
    assert rows[3] is None and rows[5] is None
    # with a lower bar, game 5 is decided too (drift: 80 is level, 120 is not)
    assert es.swing(GAMES[5], "ours", 110.0, 100.0)["kind"] == "sudden"
    assert es.swing(GAMES[5], "ours", 120.0, 50.0)["kind"] == "drift"


def test_main_reads_folders_and_xz_files_and_writes_the_rows(tmp_path: Path, capsys) -> None:
    text = "\n".join(json.dumps(g) for g in GAMES) + "\n"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").write_text(text)
    packed = tmp_path / "run-results.jsonl.xz"
    packed.write_bytes(lzma.compress(text.encode()))
    out = tmp_path / "swings.json"
    assert es.main([str(tmp_path / "run"), "--out", str(out)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["lost"] == 5 and first["decided"] == 3
    assert first["by_kind"] == {"sudden": 1, "drift": 1, "first": 1}
    assert first["sudden"]["decided_by_a_mate"] == 1 and first["drift"]["decided_by_a_mate"] == 0
    assert first["mate_in_median"] == 8.0
    kept = json.loads(out.read_text())
    assert [r["game"] for r in kept["rows"]] == [0, 1, 2]
    assert es.main([str(packed)]) == 0
    second = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in second.items() if k != "results"} == \
        {k: v for k, v in first.items() if k != "results"}


def test_bad_input_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no results.jsonl"):
        es.main([str(tmp_path)])
    bad = tmp_path / "x-results.jsonl.xz"
    bad.write_bytes(b"plain text")
    with pytest.raises(SystemExit, match="x-results.jsonl.xz: not a readable results file"):
        es.main([str(bad)])
    (tmp_path / "results.jsonl").write_text('{"game": 0}\n[1, 2]\n')
    with pytest.raises(SystemExit, match="line 2: not a game result"):
        es.main([str(tmp_path)])
    with pytest.raises(SystemExit):
        es.main([str(tmp_path), "--even", "300", "--won", "300"])
