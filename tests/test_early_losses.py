"""benchmarks/early_losses.py: the verdict on a game's first moves from an oracle's answers (a fake oracle)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import early_losses as el  # noqa: E402


class FakeOracle:
    """Answers by the number of stones: ``evals[n]`` = (eval of the side to move, its best move)."""

    def __init__(self, evals):
        self.evals = evals

    def ask(self, board):
        return self.evals.get(len(board.moves), ("0", None))


# opening of 3 stones, then White (the player) moves at plies 3, 5, 7
GAME = {"game": 7, "opening": 2, "result": "1-0", "black": "rapfi", "white": "ours", "opening_plies": 3,
        "moves": [[7, 7], [8, 7], [8, 8], [6, 6], [9, 9], [5, 5], [10, 10], [4, 4]]}


def test_a_move_that_lets_a_mate():
    orc = FakeOracle({3: ("-120", "g7"), 4: ("100", "j10"), 5: ("-180", "k11"), 6: ("+M21", "k11")})
    r = el.analyse(orc, GAME, "ours", 4)
    assert r["verdict"] == "move lets a mate" and [s["ply"] for s in r["steps"]] == [3, 5]
    assert r["steps"][1] == {"ply": 5, "played": "f6", "oracle": "k11", "eval_before": "-180", "eval_after": "+M21"}


def test_lost_before_the_move_and_the_oracles_own_move():
    r = el.analyse(FakeOracle({3: ("-M30", "g7")}), GAME, "ours", 4)
    assert r["verdict"] == "lost before" and len(r["steps"]) == 1
    r = el.analyse(FakeOracle({3: ("-50", "g7"), 4: ("+M17", None)}), GAME, "ours", 4)
    assert r["verdict"] == "move lets a mate (oracle's own)"       # g7 was played and was the oracle's choice
    r = el.analyse(FakeOracle({}), GAME, "ours", 2)
    assert r["verdict"] == "open" and [s["ply"] for s in r["steps"]] == [3, 5]
    s = el.summary([el.analyse(FakeOracle({3: ("-50", "g7"), 4: ("+M17", None)}), GAME, "ours", 4),
                    el.analyse(FakeOracle({5: ("-200", "a1"), 6: ("+M25", None)}), GAME, "ours", 4), r])
    assert s["verdicts"] == {"move lets a mate": 2, "open": 1} and s["oracle_own_move"] == 1
    assert s["mate_plies"] == [17, 25]
    assert s["eval_before_move_2"] == {"median": -100.0, "n": 2, "share_at_most_-150": 0.5}
