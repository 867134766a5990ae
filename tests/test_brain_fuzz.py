"""The brain in-process (injected streams and players) and under fuzzing.

* In-process behaviour: what the player is given (Limit, memory, threads), colours, rules, show_detail
  messages, deferred commands, the watchdog and fallback moves.
* Fuzz: tens of thousands of random and malformed lines (seeded) through an in-process brain, a shorter run
  fed slowly through a pipe to a thinking player (so commands arrive during searches), and a shorter run
  through the real ``engine.py`` subprocess. Each checks that the brain never crashes, answers exactly the
  replies owed, in order and of the right kind (an independent oracle below, which only borrows
  ``parse_command`` for tokenising), and still plays a legal move after ``START 15`` + ``BEGIN``.
"""
from __future__ import annotations

import io
import logging
import os
import random
import re
import threading
import time
from typing import List, Optional, Tuple

import pytest

from gomoku_ai.board import Board
from gomoku_ai.player import Limit, NoMoveError, SearchInfo
from gomoku_ai.rules import BLACK, WHITE, Rule
from protocol import lines as L
from protocol.brain import Brain
from protocol.stdio import folder_logger
from protocol.testplayers import SleepyPlayer, StuckPlayer


# ------------------------------------------------------------------------------------------ players
class FastPlayer:
    """Answers at once with an empty square near the middle of the empty list; records its calls."""

    def __init__(self) -> None:
        self.memory_limit_bytes: Optional[int] = None
        self.thread_num = 1
        self.limits: List[Limit] = []
        self.boards: List[Board] = []
        self.new_games = 0

    def new_game(self) -> None:
        self.new_games += 1

    def think(self, board, limit, stop=None, on_info=None):
        self.limits.append(limit)
        self.boards.append(board.copy())
        if board.winner is not None or board.is_full():
            raise NoMoveError("no move")
        e = board.empty_squares()
        m = e[len(e) // 2]
        info = SearchInfo(move=m, pv=[m], visits=7, depth=2, value=0.2, elapsed_ms=1.0, nodes_per_s=7000.0)
        if on_info is not None:
            on_info(info)
        return info


class ChaosPlayer(FastPlayer):
    """Usually fast and right; sometimes raises, returns nonsense or an occupied square."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.rng = random.Random(seed)

    def think(self, board, limit, stop=None, on_info=None):
        r = self.rng.random()
        if r < 0.06:
            raise RuntimeError("chaos")
        if r < 0.09:
            raise NoMoveError("chaos")
        if r < 0.12:
            return None
        if r < 0.15:
            return SearchInfo(move=board.moves[0] if board.moves else -1)
        if r < 0.18:
            return SearchInfo(move="x")  # type: ignore[arg-type]
        return super().think(board, limit, stop, on_info)


# ------------------------------------------------------------------------------------------ harness
def run_brain(data: bytes, player, **kw) -> List[str]:
    """Feed ``data`` (ending in EOF) to an in-process brain; return its output lines."""
    out = io.BytesIO()
    b = Brain(io.BytesIO(data), out, player, **kw)
    assert b.run() == 0
    text = out.getvalue().decode()
    assert text == "" or text.endswith("\n")
    assert "\r" not in text and " \n" not in text
    return text.splitlines()


class LiveBrain:
    """An in-process brain on two pipes, run in a thread: send lines, read replies with timeouts."""

    def __init__(self, player, **kw) -> None:
        r_in, self._w_in = os.pipe()
        self._r_out, w_out = os.pipe()
        self.inp = os.fdopen(r_in, "rb")
        self.out = os.fdopen(w_out, "wb")
        self.brain = Brain(self.inp, self.out, player, **kw)
        self.lines: List[Tuple[float, str]] = []
        self._cv = threading.Condition()
        self._th = threading.Thread(target=self._run, daemon=True)
        self._rd = threading.Thread(target=self._read, daemon=True)
        self._th.start()
        self._rd.start()
        self.code: Optional[int] = None

    def _run(self) -> None:
        self.code = self.brain.run()
        self.out.close()

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._r_out, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                with self._cv:
                    self.lines.append((time.perf_counter(), line.decode()))
                    self._cv.notify_all()

    def send(self, *lines: str) -> float:
        t = time.perf_counter()
        os.write(self._w_in, "".join(x + "\n" for x in lines).encode())
        return t

    def read(self, timeout: float = 3.0) -> str:
        return self.read_timed(timeout)[1]

    def read_timed(self, timeout: float = 3.0) -> Tuple[float, str]:
        end = time.perf_counter() + timeout
        with self._cv:
            while not self.lines:
                left = end - time.perf_counter()
                if left <= 0:
                    raise AssertionError("no output")
                self._cv.wait(left)
            return self.lines.pop(0)

    def reply(self, timeout: float = 3.0) -> str:
        while True:
            line = self.read(timeout)
            if not line.startswith("MESSAGE "):
                return line

    def quiet(self, wait: float = 0.2) -> None:
        time.sleep(wait)
        with self._cv:
            assert not self.lines, self.lines

    def sync(self) -> None:
        self.send("ABOUT")
        assert self.read().startswith('name="')

    def close(self) -> None:
        try:
            os.close(self._w_in)
        except OSError:
            pass
        self._th.join(5)
        assert not self._th.is_alive(), "the brain did not exit at EOF"
        self._rd.join(5)
        os.close(self._r_out)


@pytest.fixture
def live():
    made: List[LiveBrain] = []

    def make(player, **kw) -> LiveBrain:
        lb = LiveBrain(player, **kw)
        made.append(lb)
        return lb

    yield make
    for lb in made:
        lb.close()


# ------------------------------------------------------------------------------------------ in-process behaviour
def test_limits_memory_and_threads_reach_the_player(live):
    p = FastPlayer()
    lb = live(p)
    lb.send("START 15", "INFO timeout_turn 1000", "INFO max_node 200", "INFO max_depth 3", "INFO max_memory 0",
            "INFO thread_num 3", "BEGIN")
    assert lb.reply() == "OK"
    lb.reply()
    lim = p.limits[-1]
    assert lim.visits == 200 and lim.depth == 3
    assert 800 < lim.hard_ms <= 1000 - 60 and lim.soft_ms <= lim.hard_ms
    assert p.memory_limit_bytes == 350 * 1024 * 1024
    assert p.thread_num == 3
    lb.send("INFO max_memory 123456789", "INFO max_node -1", "INFO max_depth 0", "INFO timeout_turn 0",
            "TURN 0,0")
    lb.reply()
    assert p.memory_limit_bytes == 123456789
    lim = p.limits[-1]
    assert lim.visits is None and lim.depth is None and lim.hard_ms == 0 and lim.soft_ms == 0


def test_colours_from_board_counts(live):
    p = FastPlayer()
    lb = live(p)
    lb.send("START 15", "INFO timeout_turn 0")
    assert lb.reply() == "OK"
    lb.send("BOARD", "7,7,1", "8,8,2", "DONE")
    lb.reply()
    assert p.boards[-1].side_to_move == BLACK and lb.brain.my_color == BLACK
    lb.send("BOARD", "7,7,2", "DONE")
    lb.reply()
    assert p.boards[-1].side_to_move == WHITE and lb.brain.my_color == WHITE
    assert p.boards[-1][7 * 15 + 7] == BLACK
    # c-gomoku-cli labels the last stone F=2: 3 stones, the last one the opponent's -> we are White
    lb.send("BOARD", "7,7,2", "8,8,1", "9,9,2", "DONE")
    lb.reply()
    assert p.boards[-1].side_to_move == WHITE
    lb.send("BOARD", "7,7,1", "8,8,1", "9,9,2", "DONE")  # odd counts: the first stone's owner is Black
    lb.reply()
    assert p.boards[-1].side_to_move == BLACK and p.boards[-1][7 * 15 + 7] == BLACK
    lb.send("BOARD", "1,1,3", "DONE")
    lb.reply()
    assert p.boards[-1][16] == 3 and not p.boards[-1].moves


def test_rules_and_yixin_meaning_of_2(live):
    lb = live(FastPlayer())
    lb.send("INFO rule 2", "START 15")
    assert lb.reply() == "OK"
    lb.sync()
    assert lb.brain.board.rule is Rule.FREESTYLE  # 2 = continuous bit, ignored
    lb.send("YXSHOWINFO")
    assert lb.read().startswith("MESSAGE ")
    assert lb.read().startswith("MESSAGE INFO MAX_THREAD_NUM")
    lb.sync()
    assert lb.brain.board.rule is Rule.RENJU  # Yixin-Board: 2 = renju
    for code, rule in ((0, Rule.FREESTYLE), (1, Rule.STANDARD), (4, Rule.RENJU), (8, Rule.CARO),
                       (9, Rule.CARO), (5, Rule.RENJU)):
        lb.send(f"INFO rule {code}")
        lb.sync()
        assert lb.brain.board.rule is rule, code


def test_rule_change_keeps_the_position(live):
    lb = live(FastPlayer())
    lb.send("START 15", "INFO timeout_turn 0", "TURN 7,7")
    assert lb.reply() == "OK"
    lb.reply()
    before = list(lb.brain.board.moves)
    lb.send("INFO rule 4")
    lb.sync()
    assert lb.brain.board.rule is Rule.RENJU and list(lb.brain.board.moves) == before


def test_yxshowforbid_renju():
    pytest.importorskip("gomoku_ai.renju")
    # Black to move; 7,5 would make a double three (two open threes crossing)
    data = b"INFO rule 4\nSTART 15\nYXBOARD\n5,5,1\n6,5,1\n7,7,1\n7,6,1\n0,0,2\n0,14,2\n14,0,2\n14,14,2\nDONE\n" \
           b"YXSHOWFORBID\n"
    out = run_brain(data, FastPlayer())
    assert out[0] == "OK"
    pts = L.parse_forbid_reply(out[1])
    assert (7, 5) in pts or (8, 5) in pts or (4, 5) in pts
    out = run_brain(b"START 15\nYXSHOWFORBID\n", FastPlayer())  # freestyle: nothing is forbidden
    assert out == ["OK", "FORBID ."]


def test_show_detail_message_format(live):
    lb = live(FastPlayer())
    lb.send("START 15", "INFO timeout_turn 0", "INFO show_detail 1", "BEGIN")
    assert lb.read() == "OK"
    # show_detail 1: the realtime best move (Yixin-Board), then the detail line, then the move
    assert lb.read() == "MESSAGE REALTIME REFRESH"
    assert re.fullmatch(r"MESSAGE REALTIME BEST \d+,\d+", lb.read())
    msg = lb.read()
    assert re.fullmatch(r"MESSAGE depth \d+-\d+ ev \d+\.\d n \d+ n/ms \d+ tm \d+ pv [a-z]\d+( [a-z]\d+)*", msg), msg
    assert re.fullmatch(r"\d+,\d+", lb.read())
    lb.send("INFO show_detail 0", "TURN 0,0")
    assert re.fullmatch(r"\d+,\d+", lb.read())


def test_yxstop_and_preempting_commands(live):
    lb = live(SleepyPlayer(inner=FastPlayer()))
    lb.send("START 15", "INFO timeout_turn 30000")
    assert lb.reply() == "OK"
    t0 = lb.send("BEGIN")
    lb.quiet(0.2)
    t0 = lb.send("TURN 0,0")  # a manager that stopped waiting: the search ends, then TURN is handled
    t1, first = lb.read_timed(3)
    assert re.fullmatch(r"\d+,\d+", first) and t1 - t0 < 0.5
    lb.quiet(0.2)  # the TURN's own search runs (30 s)
    lb.send("ABOUT")  # waits behind the search, without stopping it
    lb.quiet(0.2)
    t0 = lb.send("YXSTOP")
    t1, second = lb.read_timed(3)
    assert re.fullmatch(r"\d+,\d+", second) and second != first and t1 - t0 < 0.5
    assert lb.read().startswith('name="')
    # YXSTOP read after a queued request stops that request's search as soon as it starts
    t0 = lb.send("TURN 0,1", "YXSTOP")
    t1, third = lb.read_timed(3)
    assert re.fullmatch(r"\d+,\d+", third) and t1 - t0 < 0.5
    lb.quiet(0.3)


def test_huge_limits_then_yxstop(live):
    """Yixin-Board's "infinite" analysis: an enormous timeout_turn; YXSTOP still ends it at once."""
    lb = live(SleepyPlayer(inner=FastPlayer()))
    lb.send("START 15", "INFO timeout_turn 999999999999999999", "INFO timeout_match 0", "BEGIN")
    assert lb.reply() == "OK"
    lb.quiet(0.2)
    t0 = lb.send("YXSTOP")
    t1, mv = lb.read_timed(3)
    assert re.fullmatch(r"\d+,\d+", mv) and t1 - t0 < 0.5


def test_stuck_player_gets_fallback_moves(live):
    # the player answers after 2 s; the fallback is due at the hard deadline (920 ms) plus the watchdog's
    # grace, so each bound below sits half a second or more away from both
    lb = live(StuckPlayer(seconds=2.0, inner=FastPlayer()))
    lb.send("START 15", "INFO timeout_turn 1000", "BOARD", "3,7,1", "4,7,1", "5,7,1", "6,7,1",
            "3,8,2", "4,8,2", "5,8,2", "10,10,2", "DONE")
    assert lb.reply() == "OK"
    t0 = time.perf_counter()
    t1, mv = lb.read_timed(3)
    assert mv in ("2,7", "7,7")  # the fallback takes the immediate win
    assert t1 - t0 < 1.5
    t0 = lb.send("BOARD", "7,7,2", "DONE")  # the player is still busy: a fallback move at once
    t1, mv2 = lb.read_timed(3)
    assert re.fullmatch(r"\d+,\d+", mv2) and t1 - t0 < 0.5
    lb.quiet(2.1)  # the late results are dropped
    lb.sync()


def test_fallback_uses_the_best_move_so_far(live):
    class Reporter(FastPlayer):
        def think(self, board, limit, stop=None, on_info=None):
            m = board.index(0, 0)
            on_info(SearchInfo(move=m, pv=[m]))
            time.sleep(1.0)  # ignores the stop event
            return SearchInfo(move=m)

    lb = live(Reporter())
    # 500 ms, not 0: the reported move must reach the brain before the hard deadline (430 ms), which a
    # loaded machine cannot promise within the watchdog's 40 ms grace of an instant deadline
    lb.send("START 15", "INFO timeout_turn 500", "BEGIN")
    assert lb.reply() == "OK"
    assert lb.reply(3) == "0,0"


def test_player_errors_give_fallback_moves_and_the_brain_goes_on():
    data = b"START 15\nINFO timeout_turn 0\n" + b"".join(b"TURN %d,%d\n" % (i, 0) for i in range(15))
    out = run_brain(data, ChaosPlayer(1))
    assert out[0] == "OK"
    moves = out[1:]
    assert len(moves) == 15
    assert all(re.fullmatch(r"\d+,\d+", m) or m.startswith("ERROR") for m in moves)


def test_takeback_any_stone_and_play(live):
    p = FastPlayer()
    lb = live(p)
    lb.send("START 15", "INFO timeout_turn 0", "TURN 7,7")
    assert lb.reply() == "OK"
    mine = lb.reply()
    lb.send("TURN 0,0")
    lb.reply()
    lb.send("TAKEBACK 7,7")  # not the last move: the position is rebuilt without it
    assert lb.reply() == "OK"
    b = lb.brain.board
    assert b[7 * 15 + 7] == 0 and len(b.moves) == 3 and b.side_to_move == BLACK  # Black's stone came off
    lb.send(f"PLAY {mine}")  # occupied
    assert lb.reply().startswith("ERROR")
    lb.send("PLAY 7,7")  # PLAY is always our move (we are White here)
    assert lb.reply() == "7,7"
    assert lb.brain.board[7 * 15 + 7] == lb.brain.my_color == WHITE


def test_text_streams_and_writer():
    out = io.StringIO()
    b = Brain(io.StringIO("START 15\nABOUT\nFOO   \n"), out, FastPlayer())
    b.run()
    assert out.getvalue().splitlines() == ["OK", L.format_about(__import__("protocol.brain").brain.ABOUT),
                                           "UNKNOWN FOO"]


def test_end_in_process_returns_at_once(live):
    """END while a player is stuck: the brain answers the owed move with a fallback after the stop grace and
    returns; nothing else is written."""
    lb = live(StuckPlayer(seconds=5, inner=FastPlayer()))
    lb.send("START 15", "INFO timeout_turn 100000", "BEGIN")
    assert lb.reply() == "OK"
    t0 = lb.send("END")
    lb._th.join(1)
    assert not lb._th.is_alive() and time.perf_counter() - t0 < 0.5
    assert lb.code == 0
    assert re.fullmatch(r"\d+,\d+", lb.reply(0.5))
    time.sleep(0.05)
    with lb._cv:
        assert not lb.lines


def test_folder_log(tmp_path):
    root = logging.getLogger()
    before = list(root.handlers)
    level = root.level
    try:
        folder_logger(str(tmp_path))
        folder_logger(str(tmp_path))  # once only
        logging.getLogger("pygomoku.brain").info("hello folder")
        added = [h for h in root.handlers if h not in before]
        assert len(added) == 1
        added[0].flush()
        assert "hello folder" in (tmp_path / "pygomoku" / "pygomoku.log").read_text()
    finally:
        for h in list(root.handlers):
            if h not in before:
                root.removeHandler(h)
                h.close()
        root.setLevel(level)


# ------------------------------------------------------------------------------------------ fuzz: generator
INFO_KEYS = ["timeout_turn", "timeout_match", "time_left", "max_memory", "game_type", "rule", "folder",
             "evaluate", "max_depth", "max_node", "thread_num", "hash_size", "time_increment", "show_detail",
             "pondering", "caution_factor", "nonsense", "TIMEOUT_TURN"]
WORDS = ["RESTART", "BEGIN", "ABOUT", "YXSTOP", "STOP", "YXSHOWFORBID", "YXSHOWINFO", "YXHASHCLEAR", "DONE",
         "YXNBEST 2", "FOO", "SUGGEST 1,1", "OK", "TURN", "START", "PLAY", "TAKEBACK", "RECTSTART", "INFO",
         "YXNBEST", "YXSEARCHDEFEND", "YXBLOCKRESET", "YXBALANCEONE 5", "YXBLOCK", "YXBLOCKUNDO"]


def _coord(rng: random.Random, hi: int = 16) -> int:
    return rng.choice([rng.randint(0, hi), rng.randint(0, 6) + 5, rng.randint(-2, 34)])


def _garbage(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.3:
        return "".join(rng.choice("abcXYZ0123456789,. -_\t") for _ in range(rng.randint(1, 30)))
    if kind < 0.5:
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 40))).decode("latin-1")
    if kind < 0.6:
        return "ž€漢字 " * rng.randint(1, 5)
    if kind < 0.65:
        return "x" * rng.randint(1000, 20000)
    if kind < 0.8:
        w = rng.choice(WORDS)
        return "".join(c.lower() if rng.random() < 0.5 else c for c in w) + rng.choice(["", " ", " 1", " 1,2,3"])
    return rng.choice(["", " ", "\t", "\x00", "\x0b", "-", ",", "1,", ",1", "1,2,", "9" * 30 + ",1"])


def gen_lines(rng: random.Random, n: int, turn_values=(0, 0, 1, 30, 70, 100)) -> List[str]:
    out: List[str] = []
    while len(out) < n:
        r = rng.random()
        if r < 0.06:
            out.append(rng.choice(["START 15", "START 20", "start 15 15", "START 10", "START 5"] +
                                  [f"START {rng.choice([-1, 0, 3, 4, 33, 1000, 'x', ''])}"]))
        elif r < 0.08:
            out.append(f"RECTSTART {rng.randint(3, 35)},{rng.randint(3, 35)}")
        elif r < 0.25:
            out.append(f"TURN {_coord(rng)},{_coord(rng)}")
        elif r < 0.28:
            out.append(f"{rng.choice(['TAKEBACK', 'PLAY'])} {_coord(rng)},{_coord(rng)}")
        elif r < 0.42:
            key = rng.choice(INFO_KEYS)
            if key.lower() == "timeout_turn":
                val = str(rng.choice(turn_values))
            else:
                val = rng.choice(["0", "1", "2", "4", "-50", "2147483647", "350000000", "abc", "", "3,4", "1e3",
                                  str(rng.randint(-10, 10 ** 6))])
            out.append(f"INFO {key} {val}".rstrip())
        elif r < 0.55:
            cmd = rng.choice(["BOARD", "BOARD", "YXBOARD", "board"])
            out.append(cmd)
            for _ in range(rng.choice([0, 1, 2, 5, 12, 30])):
                q = rng.random()
                if q < 0.9:
                    out.append(f"{_coord(rng, 14)},{_coord(rng, 14)},{rng.choice([1, 2, 1, 2, 1, 2, 3, 0, 4])}")
                elif q < 0.95:
                    out.append(_garbage(rng))
                else:
                    out.append(f"{_coord(rng)},{_coord(rng)}")
            if rng.random() < 0.93:
                out.append(rng.choice(["DONE", "done"]))
        elif r < 0.57:
            out.append(rng.choice(["YXBLOCK", "YXBLOCKUNDO"]))
            for _ in range(rng.choice([0, 1, 2, 4])):
                out.append(f"{_coord(rng, 14)},{_coord(rng, 14)}" if rng.random() < 0.9 else "1,1,1")
            if rng.random() < 0.93:
                out.append("DONE")
        elif r < 0.6:
            out.append("SWAP2BOARD")
            for _ in range(rng.choice([0, 3, 5, 3, 1, 6])):
                out.append(f"{_coord(rng, 14)},{_coord(rng, 14)}")
            if rng.random() < 0.95:
                out.append("DONE")
        elif r < 0.75:
            out.append(rng.choice(["BEGIN", "ABOUT", "RESTART", "YXSTOP", "STOP", "YXSHOWFORBID", "YXSHOWINFO",
                                   "YXHASHCLEAR", "DONE", "7,7,1", "7,7", "INFO", "TURN 7", "TURN a,b",
                                   "YXNBEST 3", "YXNBEST 0", "YXSEARCHDEFEND", "YXBLOCKRESET", "YXBALANCETWO 3"]))
        else:
            out.append(_garbage(rng))
    return out


def to_bytes(rng: random.Random, lines: List[str]) -> bytes:
    return b"".join(line.encode("utf-8", errors="replace") + rng.choice([b"\n", b"\r\n", b"\n", b"\r"])
                    for line in lines)


# ------------------------------------------------------------------------------------------ fuzz: oracle
MOVE = r"\d+,\d+"
KINDS = {
    "ok": re.compile(r"OK|ERROR .+"),
    "move": re.compile(rf"{MOVE}|ERROR .+"),
    "about": re.compile(r'name="pygomoku", .*'),
    "error": re.compile(r"ERROR .+"),
    "unknown": re.compile(r"UNKNOWN .+"),
    "forbid": re.compile(r"FORBID (\d{4})*\.|ERROR .+"),
    "swap2": re.compile(rf"SWAP|{MOVE}|{MOVE} {MOVE}|{MOVE} {MOVE} {MOVE}|ERROR .+"),
    "yxerror": re.compile(r"ERROR YXBOARD: .+"),
}


def oracle(data: bytes) -> List[Tuple[str, str]]:
    """The replies owed for ``data`` (split and decoded as the brain does), in order, as (kind, source line)
    pairs. ``?yx`` is an optional ``ERROR <word>...`` line (a YXBOARD that could not be set up, a YXBLOCK or
    YXBLOCKUNDO that could not be read; the source is the word). MESSAGE lines (YXNBEST) are not owed. This
    mirrors the documented rules in protocol/brain.py; it shares only the tokeniser with the brain."""
    owed: List[Tuple[str, str]] = []
    block: Optional[str] = None
    for raw in data.replace(b"\r", b"\n").split(b"\n"):
        if not raw:
            continue
        text = raw.decode("utf-8", errors="replace")
        try:
            cmd = L.parse_command(text)
            bad = None
        except L.ProtocolError as e:
            cmd, bad = None, e
        if isinstance(cmd, L.Empty):
            continue
        if block is not None:
            if isinstance(cmd, L.Done):
                owed.append(("?yx" if block in ("YXBOARD", "YXBLOCK", "YXBLOCKUNDO") else
                             ("swap2" if block == "SWAP2BOARD" else "move"), block))
                block = None
                continue
            if isinstance(cmd, (L.StoneLine, L.PointLine, L.Unknown)) or (bad is not None and bad.command == "DATA"):
                continue
            owed.append(("yxerror" if block == "YXBOARD" else "error", f"{block} aborted"))
            block = None
        if isinstance(cmd, (L.Board, L.YxBoard, L.Swap2Board, L.YxBlock, L.YxBlockUndo)):
            block = cmd.word
        elif bad is not None:
            if bad.command != "INFO":
                owed.append(("error", text))
        elif isinstance(cmd, L.End):
            raise AssertionError("END is not fuzzed")
        elif isinstance(cmd, (L.YxStop, L.Stop, L.Info, L.YxHashClear, L.YxShowInfo, L.YxBlockReset)):
            continue
        elif isinstance(cmd, (L.YxNBest, L.YxSearchDefend)):
            owed.append(("move", text))
        elif isinstance(cmd, L.Unsupported):
            owed.append(("error", text))
        elif isinstance(cmd, (L.Start, L.RectStart, L.Restart, L.Takeback)):
            owed.append(("ok", text))
        elif isinstance(cmd, (L.Begin, L.Turn)):
            owed.append(("move", text))
        elif isinstance(cmd, L.Play):
            owed.append((f"play {cmd.x},{cmd.y}", text))
        elif isinstance(cmd, L.About):
            owed.append(("about", text))
        elif isinstance(cmd, L.YxShowForbid):
            owed.append(("forbid", text))
        elif isinstance(cmd, L.Unknown):
            owed.append(("unknown", text))
        elif isinstance(cmd, (L.Done, L.StoneLine, L.PointLine)):
            owed.append(("error", text))
        else:
            raise AssertionError(f"oracle does not know {cmd!r}")
    return owed


def check_replies(owed: List[Tuple[str, str]], out: List[str]) -> None:
    replies = [x for x in out if not x.startswith("MESSAGE ")]
    for x in out:
        if x.startswith("MESSAGE "):
            assert len(x) > len("MESSAGE ")
    i = 0
    for kind, src in owed:
        if kind == "?yx":  # a YXBOARD that was read to its DONE: an error only if it could not be set up
            if i < len(replies) and replies[i].startswith(f"ERROR {src}") and \
                    "not terminated" not in replies[i]:
                i += 1
            continue
        assert i < len(replies), f"missing reply for {src[:80]!r} ({kind})"
        line = replies[i]
        if kind.startswith("play "):
            assert line == kind[5:] or line.startswith("ERROR "), (src, line)
        else:
            assert KINDS[kind].fullmatch(line), f"{src[:80]!r}: expected {kind}, got {line[:100]!r}"
        i += 1
    assert i == len(replies), f"{len(replies) - i} extra replies, first {replies[i][:100]!r}"


def check_board_consistent(b: Optional[Board]) -> None:
    if b is None:
        return
    stones = int(((b.cells == BLACK) | (b.cells == WHITE)).sum())
    assert stones == len(b.moves) == len(set(b.moves))


FINAL = b"\nSTART 15\nINFO timeout_turn 0\nBEGIN\n"


def _final_ok(out: List[str]) -> None:
    out = [x for x in out if not x.startswith("MESSAGE ")]
    assert out[-2] == "OK"
    x, y = map(int, out[-1].split(","))
    assert 0 <= x < 15 and 0 <= y < 15


# ------------------------------------------------------------------------------------------ fuzz: tests
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fuzz_in_process(seed):
    rng = random.Random(seed)
    lines = gen_lines(rng, 12000)
    data = to_bytes(rng, lines) + FINAL
    player = ChaosPlayer(seed) if seed == 2 else FastPlayer()
    out = io.BytesIO()
    brain = Brain(io.BytesIO(data), out, player)
    assert brain.run() == 0
    text = out.getvalue().decode()
    assert text.endswith("\n") and "\r" not in text and " \n" not in text
    replies = text.splitlines()
    check_replies(oracle(data), replies)
    _final_ok(replies)
    check_board_consistent(brain.board)
    assert brain.moves_sent > 100


def test_fuzz_oracle_is_not_vacuous():
    data = b"START 15\nBOARD\n1,1,1\nBEGIN\nYXBOARD\n1,1,9\nDONE\nINFO x\nFOO\n7,7\nTURN 7\n"
    owed = oracle(data)
    assert [k for k, _ in owed] == ["ok", "error", "move", "?yx", "unknown", "error", "error"]
    with pytest.raises(AssertionError):
        check_replies(owed, ["OK", "ERROR x", "7,7"])
    with pytest.raises(AssertionError):
        check_replies(owed, ["OK", "ERROR x", "7,7", "UNKNOWN FOO", "ERROR a", "ERROR b", "OK"])
    check_replies(owed, ["OK", "ERROR x", "7,7", "ERROR YXBOARD: bad", "UNKNOWN FOO", "ERROR a", "ERROR b"])


def test_fuzz_through_a_pipe_while_thinking():
    """Lines arrive in small bursts while a thinking player searches (tiny budgets), so commands, INFO and
    YXSTOP keep arriving during searches: deferral, early stops and the one-reply rule are all exercised."""
    rng = random.Random(7)
    lines = gen_lines(rng, 2500, turn_values=(0, 70, 80, 90, 100))
    data = to_bytes(rng, lines) + FINAL
    r_in, w_in = os.pipe()
    r_out, w_out = os.pipe()
    inp, outp = os.fdopen(r_in, "rb"), os.fdopen(w_out, "wb")
    brain = Brain(inp, outp, SleepyPlayer(inner=FastPlayer()))
    chunks: List[bytes] = []

    def feed():
        pos = 0
        while pos < len(data):
            n = rng.randint(1, 400)
            os.write(w_in, data[pos:pos + n])
            pos += n
            time.sleep(rng.choice([0, 0, 0.001, 0.003]))
        os.close(w_in)

    def drain():
        while True:
            c = os.read(r_out, 65536)
            if not c:
                break
            chunks.append(c)

    th_feed = threading.Thread(target=feed, daemon=True)
    th_drain = threading.Thread(target=drain, daemon=True)
    th_brain = threading.Thread(target=lambda: (brain.run(), outp.close()), daemon=True)
    for th in (th_drain, th_brain, th_feed):
        th.start()
    th_feed.join(60)
    th_brain.join(60)
    assert not th_brain.is_alive()
    th_drain.join(5)
    os.close(r_out)
    replies = b"".join(chunks).decode().splitlines()
    check_replies(oracle(data), replies)
    _final_ok(replies)
    check_board_consistent(brain.board)


def test_fuzz_subprocess(engine):
    """A shorter fuzz through the real engine (real player, small time limits), stdin kept open: every owed
    reply arrives, in order; then START 15 + BEGIN still gives a legal move; stderr stays empty."""
    rng = random.Random(11)
    lines = ["INFO timeout_turn 0"] + gen_lines(rng, 1500)
    data = to_bytes(rng, lines)
    owed = oracle(data)
    e = engine()
    e.proc.stdin.write(data)
    e.proc.stdin.flush()
    def counted() -> int:  # replies that are not optional (see check_replies)
        return sum(1 for x in got if not x.startswith("MESSAGE ") and
                   not (x.startswith(("ERROR YXBOARD", "ERROR YXBLOCK")) and "not terminated" not in x))

    n_needed = sum(1 for k, _ in owed if k != "?yx")
    got: List[str] = []
    deadline = time.perf_counter() + 40
    while counted() < n_needed:
        got.append(e.read(max(0.1, deadline - time.perf_counter())))
    e.send("START 15", "INFO timeout_turn 0", "BEGIN")
    while counted() < n_needed + 2:
        got.append(e.read(5))
    e.no_output(0.3)
    check_replies(owed + [("ok", "START 15"), ("move", "BEGIN")], got)
    _final_ok([x for x in got if not x.startswith("MESSAGE ")])
    e.send("END")
    assert e.wait_exit(2) == 0


def test_forbidden_move_from_the_player_is_replaced():
    renju = pytest.importorskip("gomoku_ai.renju")

    class Reckless(FastPlayer):
        def think(self, board, limit, stop=None, on_info=None):
            m = board.index(7, 5)
            return SearchInfo(move=m)

    data = b"INFO rule 4\nSTART 15\nINFO timeout_turn 0\nBOARD\n5,5,1\n6,5,1\n7,7,1\n7,6,1\n0,0,2\n0,14,2\n14,0,2\n" \
           b"14,14,2\nDONE\n"
    b = Board(15, rule=Rule.RENJU)
    b.set_position([b.index(5, 5), b.index(6, 5), b.index(7, 7), b.index(7, 6)],
                   [b.index(0, 0), b.index(0, 14), b.index(14, 0), b.index(14, 14)], to_move=BLACK)
    assert renju.is_forbidden(b, b.index(7, 5))
    out = run_brain(data, Reckless())
    assert out[0] == "OK" and re.fullmatch(r"\d+,\d+", out[1]) and out[1] != "7,5"


def test_an_over_long_line_gets_one_reply() -> None:
    """A 10 MB line (no command fits it) is one UNKNOWN, echoing its first 200 characters; the next line is
    read as usual."""
    out = run_brain(b"START 15\n" + b"Q" * (10 << 20) + b"\nABOUT\n", FastPlayer())
    assert len(out) == 3 and out[0] == "OK" and out[2].startswith('name="')
    assert out[1] == "UNKNOWN " + "Q" * 200
