"""The Yixin analysis commands an analysis GUI sends (YXNBEST, YXSEARCHDEFEND, YXBLOCK*, the unsupported
ones) and the realtime MESSAGE lines of ``INFO show_detail``: every one is answered at once or as documented
in :mod:`protocol.dispatch`, and nothing is left for a client to wait for."""
from __future__ import annotations

import re
from typing import List

from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.player import Candidate, Player, SearchInfo
from protocol import lines as L
from test_brain_fuzz import FastPlayer, live, run_brain  # noqa: F401 (live: a fixture)

MOVE = re.compile(r"\d+,\d+")


class RankedPlayer(FastPlayer):
    """Answers its first candidate; the candidates are fixed squares (x, y), most visited first."""

    def __init__(self, squares: List[tuple]) -> None:
        super().__init__()
        self.squares = squares

    def think(self, board, limit, stop=None, on_info=None):
        self.limits.append(limit)
        free = [board.index(x, y) for x, y in self.squares if board.is_empty(board.index(x, y))]
        cands = [Candidate(m, 100 - 10 * k, 0.5 - 0.2 * k, 0.3) for k, m in enumerate(free)]
        info = SearchInfo(move=cands[0].move, pv=[cands[0].move], visits=400, source="mcts", candidates=cands,
                          root_visits=sum(c.visits for c in cands))
        if on_info is not None:
            on_info(info)
        return info


def _script(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_nbest_tells_the_best_moves_then_plays_the_first() -> None:
    p = RankedPlayer([(7, 7), (8, 8), (6, 6), (9, 9)])
    out = run_brain(_script("START 15", "YXNBEST 3", "YXNBEST 2"), p)
    assert out[0] == "OK"
    assert out[1:5] == ["MESSAGE multipv 1 ev 75.0 n 100 pv h8", "MESSAGE multipv 2 ev 65.0 n 90 pv i9",
                        "MESSAGE multipv 3 ev 55.0 n 80 pv g7", "7,7"]
    # 7,7 was played: the second request starts from it
    assert out[5:] == ["MESSAGE multipv 1 ev 75.0 n 100 pv i9", "MESSAGE multipv 2 ev 65.0 n 90 pv g7", "8,8"]


def test_search_defend_lists_every_root_move() -> None:
    p = RankedPlayer([(1, 1), (2, 2), (3, 3)])
    out = run_brain(_script("START 15", "YXSEARCHDEFEND"), p)
    assert [ln.split(" pv ")[1] for ln in out[1:4]] == ["b2", "c3", "d4"] and out[4] == "1,1"


def test_blocked_squares_are_never_answered_until_undone_or_reset() -> None:
    p = RankedPlayer([(7, 7), (8, 8), (6, 6)])
    out = run_brain(_script("START 15", "YXBLOCK", "7,7", "8,8", "DONE", "YXNBEST 5", "YXBLOCKUNDO", "8,8",
                            "DONE", "YXNBEST 5", "YXBLOCKRESET", "RESTART", "YXBLOCK", "9,9", "DONE", "RESTART",
                            "BEGIN"), p)
    # YXBLOCK/YXBLOCKUNDO/YXBLOCKRESET have no reply; NBEST leaves the blocked squares out
    assert out[:3] == ["OK", "MESSAGE multipv 1 ev 55.0 n 80 pv g7", "6,6"]
    assert out[3:5] == ["MESSAGE multipv 1 ev 65.0 n 90 pv i9", "8,8"]   # 8,8 free again, 7,7 still blocked
    assert out[5:] == ["OK", "OK", "7,7"]  # RESTART clears the blocks


def test_a_blocked_answer_without_candidates_falls_back_to_a_free_square() -> None:
    out = run_brain(_script("START 15", "YXBLOCK", "7,7", "DONE", "BEGIN"), FastPlayer())
    assert out[0] == "OK" and MOVE.fullmatch(out[1]) and out[1] != "7,7" and len(out) == 2


def test_a_blocked_centre_on_an_empty_board_moves_the_first_stone_next_to_it() -> None:
    """The real player answers an empty board with its centre and no candidates; with the centre (and
    one neighbour) blocked the answer is another square next to the centre, not the first free corner."""
    out = run_brain(_script("START 15", "YXBLOCK", "7,7", "6,6", "DONE", "BEGIN"), Player(HeuristicEvaluator()))
    assert out[0] == "OK" and len(out) == 2
    x, y = (int(v) for v in out[1].split(","))
    assert max(abs(x - 7), abs(y - 7)) == 1 and (x, y) != (6, 6)


def test_bad_blocks_and_arguments_are_errors_and_change_nothing() -> None:
    p = RankedPlayer([(7, 7), (8, 8)])
    out = run_brain(_script("START 15", "YXBLOCK", "99,1", "DONE", "YXBLOCK", "1,1,1", "DONE",
                            "YXNBEST", "YXNBEST 0", "YXNBEST x", "BEGIN"), p)
    assert out[0] == "OK"
    assert out[1].startswith("ERROR YXBLOCK: 99,1 is off") and out[2].startswith("ERROR YXBLOCK: expected")
    assert all(ln.startswith("ERROR YXNBEST needs") for ln in out[3:6])
    assert out[6] == "7,7" and len(out) == 7


def test_unsupported_yixin_commands_get_an_error_at_once() -> None:
    out = run_brain(_script("START 15", "YXBALANCEONE 10", "YXBALANCETWO -5", "YXDBCHECK", "ABOUT"),
                    FastPlayer())
    assert out[1:4] == [f"ERROR {w} is not supported by this brain"
                        for w in ("YXBALANCEONE", "YXBALANCETWO", "YXDBCHECK")]
    assert out[4].startswith('name="')


def test_info_max_depth_and_caution_factor_are_silent() -> None:
    out = run_brain(_script("START 15", "INFO max_depth 5", "INFO caution_factor 3", "ABOUT"), FastPlayer())
    assert len(out) == 2 and out[1].startswith('name="')


def _live_lines(lb, n_moves: int = 1, timeout: float = 30.0) -> List[str]:
    """Every line up to and including the ``n_moves``-th move line."""
    out: List[str] = []
    while n_moves:
        out.append(lb.read(timeout))
        n_moves -= bool(MOVE.fullmatch(out[-1]))
    return out


def test_nbest_with_the_real_search(live) -> None:
    """With the engine's player (input kept open, so the search runs to its visit limit): the lines are its
    root moves, the answer first, then the most visited."""
    lb = live(Player(HeuristicEvaluator(), seed=1, use_vcf=False))
    lb.send("START 15", "INFO max_node 400", "YXBOARD", "7,7,1", "8,7,2", "DONE", "YXNBEST 3")
    out = _live_lines(lb)
    assert out[0] == "OK" and len(out) == 5
    lines = [re.fullmatch(r"MESSAGE multipv (\d) ev ([\d.]+) n (\d+) pv ([a-o]\d+)", ln) for ln in out[1:4]]
    assert all(lines) and [int(m.group(1)) for m in lines] == [1, 2, 3]
    visits = [int(m.group(3)) for m in lines]
    assert visits[1:] == sorted(visits[1:], reverse=True) and sum(visits) > 100
    x, y = map(int, out[4].split(","))
    assert lines[0].group(4) == Board(15).move_name(Board(15).index(x, y))


def test_realtime_best_move_messages_while_searching(live) -> None:
    """``show_detail 1``: Yixin-Board's realtime lines come before the move, the detail line last."""
    lb = live(Player(HeuristicEvaluator(), seed=1, use_vcf=False))
    lb.send("START 15", "INFO show_detail 1", "INFO max_node 3000", "YXBOARD", "7,7,1", "8,7,2", "DONE",
            "YXNBEST 1")
    out = _live_lines(lb)
    assert out[0] == "OK"
    realtime = [ln for ln in out if ln.startswith("MESSAGE REALTIME")]
    assert realtime[0] == "MESSAGE REALTIME REFRESH"
    assert re.fullmatch(r"MESSAGE REALTIME BEST \d+,\d+", realtime[1])
    assert re.fullmatch(r"MESSAGE depth .*", out[-2])


def test_show_detail_zero_writes_no_realtime_lines(live) -> None:
    lb = live(Player(HeuristicEvaluator(), seed=1, use_vcf=False))
    lb.send("START 15", "INFO max_node 500", "YXBOARD", "7,7,1", "8,7,2", "DONE", "YXNBEST 1")
    out = _live_lines(lb)
    assert out[0] == "OK" and not [ln for ln in out if "REALTIME" in ln]


def test_every_yixin_word_is_known_to_the_parser() -> None:
    for word in ("YXNBEST 2", "YXSEARCHDEFEND", "YXBLOCK", "YXBLOCKUNDO", "YXBLOCKRESET", "YXBALANCEONE 3"):
        assert not isinstance(L.parse_command(word), L.Unknown), word
    assert isinstance(L.parse_command("YXNOSUCH"), L.Unknown)
