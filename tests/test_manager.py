"""Manager side of the protocol (protocol/manager.py) and the referee (gomoku_ai/match.py, through
tools/tournament/game.py), against our own engine.py and against small fake engines: stall -> timeout loss and the process tree killed within
deadline + tolerance; crash -> crash loss and a working restart; occupied square -> illegal move; garbage ->
protocol error; renju forbidden move; bad bytes, MESSAGE/DEBUG and stderr handled without failing; a late reply
within the tolerance counted (only the clock charged), beyond it a time loss."""
from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gomoku_ai.board import Board
from gomoku_ai.rules import Rule, Termination
from protocol.manager import (EngineClient, EngineCrashed, EngineProtocolError, EngineState, EngineStateError,
                              EngineTimeout)
from gomoku_ai.match import GameConfig, TimeControl
from tools.tournament.game import GameSpec, play_game
from tools.tournament.players import ExternalPlayer, InProcessPlayer, parse_player

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine.py"

FAKE = textwrap.dedent(r'''
    """A tiny pbrain engine for manager tests. argv[1] is the mode."""
    import os, subprocess, sys, time
    mode = sys.argv[1] if len(sys.argv) > 1 else "normal"
    state = sys.argv[2] if len(sys.argv) > 2 else ""
    out = sys.stdout
    def say(s):
        out.write(s + "\n"); out.flush()
    size = 15
    stones = set()
    script = [tuple(map(int, m.split(","))) for m in os.environ.get("FAKE_MOVES", "").split(";") if m]
    if mode == "stall" and state:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        with open(state, "w") as f:
            f.write(str(child.pid))
    def pick():
        if script:
            return script.pop(0)
        c = size // 2
        for r in range(size):
            for dy in range(-r, r + 1):
                for dx in range(-r, r + 1):
                    x, y = c + dx, c + dy
                    if 0 <= x < size and 0 <= y < size and (x, y) not in stones:
                        return x, y
    def answer():
        if mode == "stall":
            time.sleep(600)
        if mode == "late":  # every reply FAKE_DELAY_MS late
            time.sleep(float(os.environ.get("FAKE_DELAY_MS", "500")) / 1000.0)
        if mode == "crash" and not (state and os.path.exists(state)):
            if state:
                open(state, "w").close()
            sys.stderr.write("fake: crashing now\n"); sys.stderr.flush()
            os._exit(3)
        if mode == "garbage":
            say("hello there"); return
        if mode == "illegal" and stones:
            x, y = sorted(stones)[0]; say(f"{x},{y}"); return
        if mode == "chatty":
            sys.stderr.write("fake: thinking\n"); sys.stderr.flush()
            say("MESSAGE thinking hard"); say("DEBUG internal"); say("")
            out.buffer.write(b"MESSAGE bad \xff\xfe bytes\n"); out.flush()
        if mode in ("complain", "complain-mute"):  # an INFO it cannot meet, answered before the move
            say("ERROR max_memory too small")
            if mode == "complain-mute":
                return
        if mode == "eval":  # like Rapfi: its evaluation on a MESSAGE line before the move
            say(f"MESSAGE Speed 1K | Depth 3 | Eval {10 * len(stones) - 50} | Node 9")
        x, y = pick()
        stones.add((x, y))
        say(f"{x},{y}")
        global replied
        replied = time.monotonic()
    replied = -1e9
    deaf_s = float(os.environ.get("FAKE_DEAF_MS", "0")) / 1000.0
    block = None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        if mode == "deaf" and time.monotonic() - replied < deaf_s:
            continue  # like Rapfi: a line that arrives while the search winds down is lost
        if block is not None:
            if line.upper() == "DONE":
                block = None; answer()
            else:
                x, y, _ = map(int, line.split(",")); stones.add((x, y))
            continue
        word = line.split()[0].upper()
        if word == "ABOUT":
            say('name="fake", version="1"')
        elif word == "START":
            size = int(line.split()[1]); stones.clear(); say("OK")
        elif word == "INFO":
            pass
        elif word == "BEGIN":
            answer()
        elif word == "TURN":
            x, y = map(int, line.split()[1].split(",")); stones.add((x, y)); answer()
        elif word == "BOARD":
            stones.clear(); block = []
        elif word == "END":
            break
        else:
            say("UNKNOWN " + line)
''')


@pytest.fixture(autouse=True)
def _no_unbuffered(monkeypatch):
    """Engines must flush by themselves (PROTOCOL.md P1): the dev machines set PYTHONUNBUFFERED."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    monkeypatch.delenv("PYGOMOKU_PLAYER", raising=False)


@pytest.fixture
def fake(tmp_path):
    path = tmp_path / "fake.py"
    path.write_text(FAKE)
    clients = []

    def make(mode="normal", state="", env=None, **kw):
        e = dict(os.environ)
        e.update(env or {})
        kw.setdefault("tolerance_ms", 200)
        kw.setdefault("startup_timeout_ms", 5000)
        c = EngineClient([sys.executable, str(path), mode, str(state)], name=f"fake-{mode}", env=e, **kw)
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.quit()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _spec(i: int, opening=()):
    return GameSpec(game=i, pair=0, round=0, pairing=0, black=0, white=1, opening_index=None, transform=0,
                    opening=list(opening), seed=1234 + i)


def _ext(tmp_path, mode, state="", env=None, name=None):
    path = tmp_path / "fake.py"
    path.write_text(FAKE)
    toks = [f"cmd={sys.executable} {path} {mode} {state}", f"name={name or mode}"]
    for k, v in (env or {}).items():
        toks.append(f"env.{k}={v}")
    return ExternalPlayer(parse_player(toks), tolerance_ms=200, startup_timeout_ms=5000, move_timeout_ms=2000)


def _random():
    p = InProcessPlayer(parse_player(["random"]))
    return p


# ------------------------------------------------------------------------------------------ client
def test_our_engine_about_start_moves_and_quit():
    c = EngineClient([sys.executable, str(ENGINE)], name="ours", tolerance_ms=500)
    try:
        about = c.start()
        assert about["name"] == "pygomoku" and c.state is EngineState.IDLE
        c.new_game(15, 15, [("timeout_turn", 1000), ("timeout_match", 0), ("max_node", 30), ("rule", 0),
                            ("thread_num", 1)])
        assert c.state is EngineState.READY
        r1 = c.play([], None, 1000)
        b = Board(15)
        b.push(b.index(r1.x, r1.y))
        r2 = c.play([(r1.x, r1.y), (7, 8) if (r1.x, r1.y) != (7, 8) else (6, 6)], None, 1000)
        assert 0 <= r2.x < 15 and 0 <= r2.y < 15 and r2.elapsed_ms < 1500
        assert (r2.x, r2.y) != (r1.x, r1.y)
        # a BOARD request (the engine missed a move): still answered
        c._seen = 0
        r3 = c.play([(7, 7), (8, 8), (9, 9)], None, 1000)
        assert (r3.x, r3.y) not in [(7, 7), (8, 8), (9, 9)]
        with pytest.raises(EngineStateError):
            c.start()
        pid = c.pid
        assert c.quit() == 0, "END should make engine.py exit with code 0"
        assert not _alive(pid) and c.state is EngineState.STOPPED
        assert not any("Traceback" in line for line in c.stderr_tail)
    finally:
        c.quit()


def test_stall_is_a_timeout_and_the_process_tree_is_killed(fake, tmp_path):
    state = tmp_path / "child.pid"
    c = fake("stall", state)
    c.start()
    c.new_game(15, 15, [("timeout_turn", 300)])
    pid = c.pid
    child = int(state.read_text())
    assert _alive(child)
    t0 = time.monotonic()
    with pytest.raises(EngineTimeout) as ei:
        c.play([], None, 300)
    waited = time.monotonic() - t0
    assert 0.45 <= waited < 0.5 + 0.4, waited  # budget 300 ms + tolerance 200 ms
    assert ei.value.termination is Termination.TIME
    assert c.state is EngineState.DEAD
    end = time.monotonic() + 1.0
    while (_alive(pid) or _alive(child)) and time.monotonic() < end:
        time.sleep(0.02)
    assert not _alive(pid), "the engine was not killed"
    assert not _alive(child), "the engine's child process was not killed"


def test_crash_is_reported_and_restart_works(fake, tmp_path):
    marker = tmp_path / "crashed.once"
    c = fake("crash", marker)
    c.start()
    c.new_game(15, 15)
    with pytest.raises(EngineCrashed) as ei:
        c.play([], None, 2000)
    assert "code 3" in ei.value.reason and "crashing now" in ei.value.reason  # exit code and stderr tail
    assert c.state is EngineState.DEAD and ei.value.termination is Termination.CRASH
    c.ensure_started()  # a fresh process: the marker now exists, so it plays
    assert c.starts == 2
    c.new_game(15, 15)
    r = c.play([], None, 2000)
    assert (r.x, r.y) == (7, 7)


def test_kill_from_another_thread_during_start_waits_for_the_spawn_and_kills_it(fake, monkeypatch):
    """An interrupted run kills its engines from the main thread while a worker may be inside start()
    (CI, session 45: kill() joined a reader thread that start() had made but not yet started, and the
    run ended with a RuntimeError instead of its interrupt). kill() must wait for the spawn, kill that
    process, and the starting thread must get a typed crash."""
    import threading
    import protocol.manager as manager
    spawning = threading.Event()
    real_start = manager._Reader.start

    def slow_start(self):
        if not spawning.is_set():
            spawning.set()
            time.sleep(0.3)  # the killer runs now, between making the readers and starting them
        real_start(self)

    monkeypatch.setattr(manager._Reader, "start", slow_start)
    c = fake("normal")
    got = []

    def starter():
        try:
            c.start()
            got.append("started")
        except Exception as e:  # noqa: BLE001 - the test inspects what start() raised
            got.append(e)

    th = threading.Thread(target=starter)
    th.start()
    assert spawning.wait(10)
    c.kill("interrupted")  # before the fix: RuntimeError: cannot join thread before it is started
    th.join(10)
    # start() either saw the kill (a typed crash) or had finished just before it; the client ends DEAD
    assert not th.is_alive() and len(got) == 1 and (got[0] == "started" or isinstance(got[0], EngineCrashed)), got
    assert c.state is EngineState.DEAD and c.proc is not None and not _alive(c.proc.pid)


def test_settle_gap_after_a_move_keeps_an_engine_that_drops_early_commands(fake):
    """Rapfi drops a command that arrives right after its move reply. The fake here drops every
    line for 200 ms after a reply: without a settle gap the next request is lost (a time-out);
    with one longer than that, every request is answered."""
    env = {"FAKE_DEAF_MS": "200"}
    c = fake("deaf", env=env, settle_ms=0)
    c.start()
    c.new_game(15, 15)
    c.play([], None, 2000)
    with pytest.raises(EngineTimeout):
        c.play([(7, 7), (8, 8)], None, 100)
    ok = fake("deaf", env=env, settle_ms=300)
    ok.start()
    ok.new_game(15, 15)
    moves = []
    for _ in range(3):
        r = ok.play(moves + [(0, len(moves))], None, 2000)
        moves += [(0, len(moves)), (r.x, r.y)]
    assert len(moves) == 6 and ok.state is EngineState.READY


def test_settle_ms_is_checked():
    with pytest.raises(ValueError, match="settle_ms"):
        EngineClient(["true"], settle_ms=-1)


def test_garbage_is_a_protocol_error(fake):
    c = fake("garbage")
    c.start()
    c.new_game(15, 15)
    with pytest.raises(EngineProtocolError) as ei:
        c.play([(7, 7)], None, 2000)
    assert "hello there" in ei.value.reason and ei.value.termination is Termination.PROTOCOL
    assert c.state is EngineState.DEAD


def test_an_error_line_before_the_move_is_kept_not_fatal(fake, caplog):
    """ERROR while a move is awaited (a brain's delayed complaint about an INFO, PROTOCOL.md; Rapfi's answer
    to a command it misread) is logged and kept, and the move that follows is taken, as c-gomoku-cli does;
    an engine that sends ERROR and never a move times out as any other."""
    c = fake("complain")
    c.start()
    c.new_game(15, 15)
    with caplog.at_level("WARNING", logger="gomoku.manager"):
        r = c.play([], None, 2000)
    assert (r.x, r.y) == (7, 7) and r.errors == ["ERROR max_memory too small"]
    assert c.state is EngineState.READY and "max_memory too small" in caplog.text
    r = c.play([(7, 7), (8, 8)], None, 2000)
    assert r.errors == ["ERROR max_memory too small"] and c.state is EngineState.READY
    mute = fake("complain-mute")
    mute.start()
    mute.new_game(15, 15)
    with pytest.raises(EngineTimeout):
        mute.play([], None, 300)
    assert mute.state is EngineState.DEAD


def test_messages_debug_stderr_and_bad_bytes_are_not_fatal(fake, caplog):
    c = fake("chatty")
    c.start()
    c.new_game(15, 15)
    with caplog.at_level("INFO", logger="gomoku.manager"):
        r = c.play([], None, 2000)
        assert (r.x, r.y) == (7, 7)
        assert r.messages[0] == "thinking hard" and "bad" in r.messages[1] and r.debug == ["internal"]
        r2 = c.play([(7, 7), (0, 0)], None, 2000)  # TURN
        end = time.monotonic() + 3.0  # stderr has its own reader thread: its lines may come a little later
        while "fake: thinking" not in list(c.stderr_tail) and time.monotonic() < end:
            time.sleep(0.01)
    assert (r2.x, r2.y) not in [(7, 7), (0, 0)]
    text = caplog.text
    assert "not UTF-8" in text and "fake: thinking" in text
    assert "fake: thinking" in list(c.stderr_tail)


def test_start_failures_are_typed(tmp_path):
    c = EngineClient([str(tmp_path / "no-such-engine")], name="missing")
    with pytest.raises(EngineCrashed):
        c.start()
    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(600)\n")
    c = EngineClient([sys.executable, str(silent)], name="silent", startup_timeout_ms=300)
    t0 = time.monotonic()
    with pytest.raises(EngineTimeout):
        c.start()
    assert time.monotonic() - t0 < 1.5
    assert not c.alive


def test_request_lines_begin_turn_board():
    c = EngineClient(["true"], name="x")
    assert c.request_lines([]) == ["BEGIN"]
    c._seen = 1
    assert c.request_lines([(7, 7), (8, 8)]) == ["TURN 8,8"]
    c._seen = 0
    # Black to move after 3 stones: the side to move's stones are 1, the last stone is always 2
    assert c.request_lines([(7, 7), (8, 8), (9, 9)]) == ["BOARD", "7,7,2", "8,8,1", "9,9,2", "DONE"]
    assert c.request_lines([(7, 7), (8, 8)]) == ["BOARD", "7,7,1", "8,8,2", "DONE"]


# ------------------------------------------------------------------------------------------ referee
CFG = GameConfig(width=15, height=15, rule=Rule.FREESTYLE, max_plies=30, tolerance_ms=200,
                 move_timeout_ms=2000)
TC = TimeControl.parse("0/0.5")


def test_game_engine_py_against_random(tmp_path):
    ours = ExternalPlayer(parse_player([f"cmd={sys.executable} {ENGINE}", "name=ours", "nodes=30"]),
                          tolerance_ms=500, startup_timeout_ms=10000)
    try:
        res = play_game(_spec(0, [(7, 7), (8, 7), (6, 9)]), (ours, _random()), CFG, (TC, TC))
        assert res["termination"] in ("five", "adjudication"), res
        assert res["offender"] is None and res["plies"] >= 4
        assert all(t is None or t < 700 for t in res["times_ms"])
        res2 = play_game(_spec(1), (_random(), ours), CFG, (TC, TC))  # same process, new START
        assert res2["offender"] is None and ours.client.starts == 1
    finally:
        ours.close()


def test_engine_py_renju_20x20(tmp_path):
    ours = ExternalPlayer(parse_player([f"cmd={sys.executable} {ENGINE}", "name=ours", "nodes=20"]),
                          tolerance_ms=500, startup_timeout_ms=10000)
    cfg = GameConfig(width=20, height=20, rule=Rule.RENJU, max_plies=20, tolerance_ms=500, move_timeout_ms=2000)
    try:
        for i, players in enumerate(((ours, _random()), (_random(), ours))):
            res = play_game(_spec(i, [(10, 10), (11, 10), (9, 12)]), players, cfg, (TC, TC))
            assert res["offender"] is None, res
            assert all(0 <= x < 20 and 0 <= y < 20 for x, y in res["moves"])
    finally:
        ours.close()


def test_stalling_engine_loses_on_time(tmp_path):
    staller = _ext(tmp_path, "stall")
    try:
        t0 = time.monotonic()
        res = play_game(_spec(0), (staller, _random()), CFG, (TC, TC))
        assert time.monotonic() - t0 < 0.5 + 0.2 + 2.0
        assert res["termination"] == "time" and res["offender"] == "black" and res["result"] == "0-1"
        assert staller.client.state is EngineState.DEAD
    finally:
        staller.close()


def test_crashing_engine_loses_then_restarts_for_the_next_game(tmp_path):
    crasher = _ext(tmp_path, "crash", tmp_path / "once")
    try:
        r1 = play_game(_spec(0), (_random(), crasher), CFG, (TC, TC))
        assert r1["termination"] == "crash" and r1["offender"] == "white" and r1["result"] == "1-0"
        assert "code 3" in r1["reason"]
        r2 = play_game(_spec(1), (_random(), crasher), CFG, (TC, TC))
        assert r2["offender"] is None and crasher.client.starts == 2
    finally:
        crasher.close()


def test_occupied_square_is_an_illegal_move(tmp_path):
    bad = _ext(tmp_path, "illegal")
    try:
        res = play_game(_spec(0, [(7, 7)]), (_random(), bad), CFG, (TC, TC))
        assert res["termination"] == "illegal" and res["offender"] == "white" and res["result"] == "1-0"
        assert res["rejected_move"] == [7, 7]
        assert [7, 7] == res["moves"][0] and res["moves"].count([7, 7]) == 1  # not played
    finally:
        bad.close()


def test_garbage_engine_loses_by_protocol_error(tmp_path):
    g = _ext(tmp_path, "garbage")
    try:
        res = play_game(_spec(0, [(7, 7)]), (_random(), g), CFG, (TC, TC))
        assert res["termination"] == "protocol" and res["offender"] == "white"
    finally:
        g.close()


def test_renju_forbidden_move_loses_for_black(tmp_path):
    opening = [(6, 7), (0, 0), (7, 7), (0, 14), (8, 5), (14, 0), (8, 6), (14, 14)]
    black = _ext(tmp_path, "normal", env={"FAKE_MOVES": "8,7"}, name="scripted")
    cfg = GameConfig(width=15, height=15, rule=Rule.RENJU, max_plies=30, tolerance_ms=200,
                     move_timeout_ms=2000)
    try:
        res = play_game(_spec(0, opening), (black, _random()), cfg, (TC, TC))
        assert res["termination"] == "forbidden" and res["offender"] == "black" and res["result"] == "0-1"
        assert "double-three" in res["reason"]
    finally:
        black.close()


def test_game_clock_and_increment(tmp_path):
    """A tiny game clock: time_left is sent and enforced; a stalling engine dies at time_left + tolerance."""
    staller = _ext(tmp_path, "stall")
    tc = TimeControl.parse("0.3+0.1")  # 300 ms per game, +100 ms per move, no turn limit
    try:
        t0 = time.monotonic()
        res = play_game(_spec(0), (staller, _random()), CFG, (tc, tc))
        assert res["termination"] == "time"
        assert time.monotonic() - t0 < 0.4 + 0.2 + 2.0
    finally:
        staller.close()


def test_time_control_parsing():
    assert TimeControl.parse("60/5+0.5") == TimeControl(60000, 5000, 500)
    assert TimeControl.parse("0/1") == TimeControl(0, 1000, 0)
    assert TimeControl.parse("120+1") == TimeControl(120000, 0, 1000)
    assert TimeControl.parse("none") == TimeControl()
    assert str(TimeControl.parse("60/5+0.5")) == "60/5+0.5"
    for bad in ("abc", "1/2/3", "-1"):
        with pytest.raises(ValueError):
            TimeControl.parse(bad)


def test_late_reply_within_the_tolerance_counts_beyond_it_loses_on_time(tmp_path):
    """As c-gomoku-cli: a reply after the turn budget but within budget + tolerance is played (the move time is
    recorded as it was); a reply later than that is a time loss, with the deadline in the reason."""
    cfg = GameConfig(width=15, height=15, rule=Rule.FREESTYLE, max_plies=7, tolerance_ms=600,
                     move_timeout_ms=2000)
    tc = TimeControl.parse("0/0.2")  # 200 ms per move; the engine answers after 450 ms
    late = _ext(tmp_path, "late", env={"FAKE_DELAY_MS": "450"}, name="late")
    try:
        res = play_game(_spec(0, [(7, 7), (8, 8), (6, 6)]), (_random(), late), cfg, (tc, tc))
        assert res["offender"] is None and res["termination"] == "adjudication", res
        late_times = res["times_ms"][3::2]  # White's moves (after the 3 opening stones: plies 4 and 6)
        assert len(late_times) == 2 and all(400 <= t < 800 for t in late_times), res["times_ms"]
        assert late.client.state is EngineState.READY and late.client.starts == 1  # not killed
    finally:
        late.close()
    slow = _ext(tmp_path, "late", env={"FAKE_DELAY_MS": "1500"}, name="slow")
    try:
        t0 = time.monotonic()
        res = play_game(_spec(1, [(7, 7), (8, 8), (6, 6)]), (_random(), slow), cfg, (tc, tc))
        assert time.monotonic() - t0 < 1.4  # killed at 200 + 600 ms, not waited for
        assert res["termination"] == "time" and res["offender"] == "white" and res["result"] == "1-0"
        assert "budget 200 + tolerance 600" in res["reason"] and res["plies"] == 3
        assert slow.client.state is EngineState.DEAD
    finally:
        slow.close()


def test_late_reply_on_a_game_clock_is_charged_then_loses(tmp_path):
    """A game clock of 1 s, no turn limit, a reply every 450 ms: moves 1-2 fit the clock; move 3 takes the clock
    below zero but not below -tolerance, so it counts and is charged; move 4 has only the rest of the tolerance
    and loses on time."""
    cfg = GameConfig(width=15, height=15, rule=Rule.FREESTYLE, max_plies=40, tolerance_ms=600,
                     move_timeout_ms=5000)
    tc = TimeControl.parse("1")
    late = _ext(tmp_path, "late", env={"FAKE_DELAY_MS": "450"}, name="late")
    try:
        res = play_game(_spec(0), (late, _random()), cfg, (tc, tc))
        assert res["termination"] == "time" and res["offender"] == "black", res
        black_times = res["times_ms"][0::2]
        assert len(black_times) == 3 and all(t >= 450 for t in black_times), res["times_ms"]
        assert res["plies"] == 6  # three black moves counted, the 4th lost on time
        assert "no reply" in res["reason"] and "(budget -" in res["reason"], res["reason"]  # clock below 0
        # the clock was charged the full time of every counted move
        assert res["clock_ms"]["black"] == pytest.approx(1000 - sum(black_times), abs=3)
        assert -600 < res["clock_ms"]["black"] < 0
    finally:
        late.close()
