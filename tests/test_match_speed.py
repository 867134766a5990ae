"""benchmarks/match_speed.py: a player's search speed in tournament runs, from its move summaries."""
from __future__ import annotations

import argparse
import json
import lzma
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import match_speed  # noqa: E402


def _summary(nodes: int, tm: int) -> str:
    return f"depth 9-9 ev 55.0 n {nodes} n/ms {nodes // max(tm, 1)} tm {tm} pv h8 i9"


def _game(g: int, black: str, white: str, comments: Dict[str, str], times: list) -> Dict[str, Any]:
    return {"game": g, "pair": g // 2, "black": black, "white": white, "winner": "black",
            "opening_plies": 3, "comments": comments, "times_ms": times}


def test_speeds_are_the_players_own_searches_in_the_ply_range() -> None:
    rows = [
        # A is Black: even move indices. 10 and 12 count; 4 is before the range, 32 after it,
        # 11 is the opponent's (AIWine's own message), 14 had no search (tm 0), 16 only tactics (n 0)
        _game(0, "A", "B", {"4": _summary(100, 1000), "10": _summary(1500, 750),
                            "11": "depth: 7-14 best:[6,7] val=-29 time:265ms\nnode:242021 eval:-29",
                            "12": "VCT cost time:0ms\n" + _summary(900, 900),
                            "14": _summary(0, 0), "16": _summary(0, 412), "32": _summary(5, 1)},
              [None, None, None, 500, 930, 20, 950]),
        # A is White: odd indices; 21 counts
        _game(1, "B", "A", {"20": _summary(7, 1), "21": _summary(2000, 1000)},
              [None, None, None, 971, 3]),
    ]
    speeds, tms, longest = match_speed.move_speeds(rows, "A", (10, 30))
    assert sorted(speeds) == [1000.0, 2000.0, 2000.0]
    assert sorted(tms) == [750, 900, 1000]
    # the longest of A's moves after the opening by the manager's clock: 950 (index 6) in game 0,
    # 971 (index 3) in game 1; the opening's plies and B's moves do not count
    assert longest == 971
    s = match_speed.summary(speeds, tms, longest)
    assert s["moves"] == 3 and s["nodes_per_s"] == 2000.0 and s["tm_ms"] == 900


def test_main_reads_xz_results_and_pools_runs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    one = tmp_path / "one"
    one.mkdir()
    (one / "results.jsonl").write_text(json.dumps(_game(0, "A", "B", {"10": _summary(1000, 1000)},
                                                        [None, None, None, 1, 900])) + "\n")
    two = tmp_path / "two-results.jsonl.xz"
    two.write_bytes(lzma.compress((json.dumps(_game(0, "A", "B", {"12": _summary(3000, 1000)},
                                                    [None, None, None, 1, 800])) + "\n").encode()))
    assert match_speed.main([f"{one}:A", f"{two}:A"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["nodes_per_s"] for r in out["runs"]] == [1000.0, 3000.0]
    assert out["pooled"]["moves"] == 2 and out["pooled"]["nodes_per_s"] == 2000.0
    assert out["pooled"]["max_move_ms"] == 900


def test_a_run_without_summaries_is_refused_naming_it(tmp_path: Path) -> None:
    run = tmp_path / "quiet"
    run.mkdir()
    (run / "results.jsonl").write_text(json.dumps(_game(0, "A", "B", {}, [None, None, None, 5])) + "\n")
    with pytest.raises(SystemExit, match="quiet.*show_detail"):
        match_speed.main([f"{run}:A"])
    with pytest.raises(SystemExit, match="FOLDER:PLAYER"):
        match_speed.main([str(run)])


def test_plies_are_checked() -> None:
    assert match_speed.parse_plies("5-40") == (5, 40)
    for bad in ("40-5", "10", "a-b"):
        with pytest.raises(argparse.ArgumentTypeError):
            match_speed.parse_plies(bad)
