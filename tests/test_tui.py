"""The terminal UI (tools/tui) driven without a terminal: prompt-toolkit pipe input, a recording
rich console and cheap players (heuristic evaluator, a few dozen visits)."""
from __future__ import annotations

import io
import os
import signal
import threading
import time
from typing import Callable, Iterable, List, Optional

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.player import Limit, Player
from gomoku_ai.records import read_record
from gomoku_ai.rules import BLACK, EMPTY, WHITE, Rule, Termination
from tools.tui import commands as C
from tools.tui.app import PromptReader, TerminalUI
from tools.tui.render import Theme, Thinking, View, board_text, frame, panel_lines
from tools.tui.session import GameSession, looks_like_move

BOTH = {BLACK, WHITE}


def cheap_player(rule: Rule = Rule.FREESTYLE) -> Player:
    return Player(HeuristicEvaluator(), seed=1)


def make_ui(size: int = 9, rule: Rule = Rule.FREESTYLE, humans=frozenset({BLACK}),
            visits: int = 30, max_moves: Optional[int] = None, save_dir: str = ".",
            console: Optional[Console] = None, limit: Optional[Limit] = None) -> TerminalUI:
    console = console or Console(file=io.StringIO(), record=True, width=80)
    session = GameSession(size, size, rule, set(humans), max_moves)
    return TerminalUI(session, cheap_player, limit or Limit(visits=visits), console, None,
                      save_dir=save_dir)


def drive(ui: TerminalUI, lines: Iterable[str], raw: str = "") -> str:
    """Run the UI with the lines typed through a prompt-toolkit pipe input; returns the screen
    transcript (the pipe is closed at the end, so the UI ends on EOF if nothing quit it)."""
    with create_pipe_input() as pipe:
        ui.reader = PromptReader(ui, input=pipe, output=DummyOutput())
        pipe.send_text(raw + "".join(line + "\n" for line in lines))
        pipe.close()
        ui.run()
    return ui.console.export_text()


def messages(ui: TerminalUI, kind: Optional[str] = None) -> List[str]:
    return [t for k, t in ui.log if kind is None or k == kind]


def has(ui: TerminalUI, text: str, kind: Optional[str] = None) -> bool:
    return any(text in t for t in messages(ui, kind))


class ScriptReader:
    """A reader that asks a function for each line (for games that adapt to the engine)."""

    interactive = False

    def __init__(self, fn: Callable[[TerminalUI, str], str], ui: TerminalUI) -> None:
        self.fn = fn
        self.ui = ui

    def read(self, message: str, default: str = "", placeholder: str = "") -> str:
        return self.fn(self.ui, message)


# ============================================================================ whole games
def test_human_vs_human_game_to_a_five_then_decline_save(tmp_path):
    ui = make_ui(9, humans=BOTH, save_dir=str(tmp_path))
    moves = ["a1", "a9", "b1", "b9", "c1", "c9", "d1", "d9", "e1"]
    out = drive(ui, moves + ["n", "quit"])
    o = ui.session.outcome()
    assert o is not None and o.winner == BLACK and o.termination is Termination.FIVE
    assert has(ui, "Black wins by five in a row after 9 moves")
    assert has(ui, "Not saved")
    # the plain board marks the winning line with * separators and shows the coordinates
    assert "*X*X*X*X*X*" in out
    assert " a b c d e f g h i " in out
    assert not list(tmp_path.iterdir())


def test_game_against_the_engine_to_a_result(tmp_path):
    """The human scatters stones far from White's; the engine (heuristic, 40 visits) wins."""
    ui = make_ui(15, humans={BLACK}, visits=40, save_dir=str(tmp_path))

    def far_move(ui: TerminalUI, message: str) -> str:
        s = ui.session
        if s.is_over():
            return "y" if message.startswith("Save") else "quit"
        b = s.board
        whites = [b.xy(m) for m in b.moves if b[m] == WHITE]
        best, score = None, -1
        for m in b.empty_squares():
            x, y = b.xy(m)
            d = min((max(abs(x - wx), abs(y - wy)) for wx, wy in whites), default=99)
            d = min(d, 6) * 100 + (x * 7 + y * 13) % 97  # spread out, deterministic
            if d > score:
                best, score = m, d
        return b.move_name(best)

    ui.reader = ScriptReader(far_move, ui)
    ui.run()
    o = ui.session.outcome()
    assert o is not None and o.winner == WHITE
    assert has(ui, "White wins by five in a row")
    saved = list(tmp_path.glob("gomoku-*.sgf"))  # "y" to the offer saves under a default name
    assert len(saved) == 1
    rec = read_record(saved[0])[0]
    assert rec.result is not None and rec.result.winner == WHITE
    assert len(rec.moves) == ui.session.ply and rec.white == "pygomoku" and rec.black == "human"


def test_watch_mode_plays_a_few_moves_and_stops_at_the_limit():
    ui = make_ui(9, humans=set(), visits=20, max_moves=6)
    out = drive(ui, ["n", "quit"])
    assert ui.session.ply == 6
    assert len([t for t in messages(ui) if t.startswith("Engine played")]) == 6
    assert has(ui, "Stopped at the move limit after 6 moves")
    assert "Black: engine" in out and "White: engine" in out


# ============================================================================ commands
def test_undo_takes_back_the_engine_reply_and_redo_replays():
    ui = make_ui(9, visits=20)
    drive(ui, ["e5", "undo", "quit"])
    assert has(ui, "Took back 2 moves")
    assert ui.session.ply == 0 and len(ui.session.future) == 2
    ui2 = make_ui(9, humans=BOTH)
    drive(ui2, ["e5", "d4", "undo", "redo", "undo", "undo", "undo", "quit"])
    assert has(ui2, "Nothing to undo", "error")
    assert ui2.session.ply == 0


def test_each_bad_input_gets_its_message_and_the_game_goes_on():
    ui = make_ui(15, rule=Rule.RENJU, humans=BOTH)
    setup = ["f8", "a1", "g8", "a3", "h6", "a5", "h7", "a7"]
    out = drive(ui, setup + ["hx8", "hnt", "xyzzy", "f8", "p16", "20,3", "h8", "j8", "quit"])
    errors = messages(ui, "error")
    assert any("'hx8' is not a move" in e for e in errors)                 # a typo
    assert any("Did you mean 'hint'" in e for e in errors)                  # a near-command
    assert any("Unknown command 'xyzzy'" in e for e in errors)
    assert any("f8 (5,7) is occupied by Black" in e for e in errors)        # occupied
    assert any("p16 is off the 15x15 board" in e for e in errors)           # off the board
    assert any("20,3 is off the 15x15 board" in e for e in errors)
    assert any("h8 is forbidden for Black under renju (double-three)" in e for e in errors)
    b = ui.session.board
    assert b[b.parse("j8")] == BLACK and b[b.parse("h8")] == EMPTY        # the game went on
    assert "×" in out                                                       # forbidden mark


def test_hint_then_enter_plays_the_suggested_move():
    ui = make_ui(9, visits=30)
    drive(ui, ["e5", "hint", "", "quit"])
    hints = [t for t in messages(ui) if t.startswith("Hint: ")]
    assert hints
    name = hints[0].split()[1]
    b = ui.session.board
    assert b[b.parse(name)] == BLACK  # Enter on the prefilled line played it
    assert ui.session.ply == 4


def test_save_and_load_round_trip_sgf_and_psq_then_review(tmp_path):
    ui = make_ui(9, humans=BOTH)
    moves = ["e5", "d4", "f6", "d6", "g7"]
    sgf, psq = tmp_path / "g.sgf", tmp_path / "g.psq"
    drive(ui, moves + [f"save {sgf}", f"save {psq}", f"save {tmp_path / 'g.txt'}", "quit"])
    assert has(ui, f"Saved 5 moves to {sgf}") and has(ui, f"Saved 5 moves to {psq}")
    assert has(ui, "must end in .sgf, .psq", "error")
    original = list(ui.session.board.moves)
    for path in (sgf, psq):
        ui2 = make_ui(15, humans={BLACK})
        drive(ui2, [f"load {path}", "first", "next", "next", "", "prev", "goto 4", "last",
                    "next", "quit"])
        s = ui2.session
        assert s.review and s.board.width == 9 and s.board.moves == original
        assert has(ui2, "Loaded 9x9 freestyle, 5 moves")
        assert has(ui2, "At the last move", "error")
    ui3 = make_ui(9)
    drive(ui3, [f"load {tmp_path / 'missing.sgf'}", "quit"])
    assert has(ui3, "Could not load", "error")


def test_review_steps_with_the_analysis_overlay(tmp_path):
    ui = make_ui(9, humans=BOTH)
    path = tmp_path / "r.sgf"
    drive(ui, ["e5", "d4", "f6", "d6", f"save {path}", "quit"])
    ui2 = make_ui(9, visits=25)
    out = drive(ui2, [f"load {path}", "analyze", "first", "next", "next", "prev", "hint", "quit"])
    s = ui2.session
    assert s.ply == 1 and s.review
    # every position stepped to was searched: the overlay has visits, a PV and a win rate
    a = s.analyses[s.key()]
    assert a.source == "search" and a.pv and a.black_winrate is not None
    assert a.heat is not None and abs(float(a.heat.sum()) - 1.0) < 1e-5
    assert "PV:" in out and "Top (visits)" in out
    assert any(t.startswith("Hint: ") for t in messages(ui2))


def test_swap_resign_new_and_modes():
    ui = make_ui(9, visits=20)
    drive(ui, ["e5", "swap", "resign", "n", "undo", "new 11 renju", "play both", "e5",
               "play none", "visits 10", "time 0.2", "time x", "quit"])
    assert has(ui, "You now play O White")
    assert has(ui, "White resigns") and has(ui, "Black wins by resignation")
    assert has(ui, "Resignation taken back")
    assert has(ui, "New game: 11x11 renju")
    assert has(ui, "Mode: human vs human") and has(ui, "Mode: engine vs engine")
    assert has(ui, "time SECONDS", "error")
    assert ui.session.board.width == 11 and ui.session.rule is Rule.RENJU
    assert ui.limit.soft_ms == 200.0


def test_help_screen_lists_the_commands():
    ui = make_ui(9)
    out = drive(ui, ["help", "quit"])
    for word in ("undo", "hint", "analyze", "save FILE", "load FILE", "swap", "resign", "quit",
                 "counted from the TOP", "0-based x,y"):
        assert word in out


def test_cursor_keys_move_a_highlight_and_enter_plays_it():
    ui = make_ui(9, humans=BOTH)
    # first arrow puts the cursor on the centre (e5), then right, right, up: g4
    drive(ui, [], raw="\x1b[C\x1b[C\x1b[C\x1b[A\r" + "quit\n")
    b = ui.session.board
    assert b.moves == [b.parse("g4")]


def test_ctrl_c_stops_the_engine_which_plays_its_best_move():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals need the main thread")
    before = signal.getsignal(signal.SIGINT)   # SIG_IGN when the suite runs in the background
    ui = make_ui(15, humans={WHITE}, limit=Limit(soft_ms=60_000))
    timer = threading.Timer(0.7, lambda: os.kill(os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    try:
        drive(ui, ["quit"])
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 10
    assert ui.session.ply == 1  # the engine moved; the program went on to the prompt
    assert signal.getsignal(signal.SIGINT) is before   # the handler it found is back


def test_ctrl_c_pauses_watch_mode_and_go_resumes():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals need the main thread")
    ui = make_ui(9, humans=set(), limit=Limit(soft_ms=60_000), max_moves=2)
    timers = [threading.Timer(t, lambda: os.kill(os.getpid(), signal.SIGINT)) for t in (0.7, 2.5)]
    for t in timers:
        t.start()
    try:
        drive(ui, ["go", "n", "quit"])
    finally:
        for t in timers:
            t.cancel()
    assert has(ui, "Paused: 'go' resumes watching")
    assert ui.session.ply == 2 and has(ui, "Stopped at the move limit after 2 moves")


def test_export_svg_and_colour_board(tmp_path):
    svg = tmp_path / "final.svg"
    console = Console(file=io.StringIO(), record=True, width=100, force_terminal=True,
                      color_system="truecolor")
    ui = make_ui(9, humans=BOTH, console=console)
    ui.export_svg = str(svg)
    out = drive(ui, ["a1", "a9", "b1", "b9", "c1", "c9", "d1", "d9", "e1", "n",
                     f"save {tmp_path / 'shot.svg'}", "quit"])
    assert svg.read_text().startswith("<svg") and (tmp_path / "shot.svg").exists()
    assert "●" in out and "X" not in out.split("Gomoku")[0]  # colour glyphs, not X/O


# ============================================================================ pieces
def test_rendering_plain_board_markers_and_the_thinking_panel():
    s = GameSession(9, 9, Rule.FREESTYLE, BOTH)
    for mv in ("e5", "d4", "f5"):
        s.play(s.check_move(mv))
    view = View(s, Theme.plain(), cursor=s.board.parse("a1"))
    lines = [t.plain for t in board_text(view)]
    assert lines[0].split() == list("abcdefghi")
    row5 = lines[5]
    assert row5.startswith("5") and row5.rstrip().endswith("5")
    assert " X[X]" in row5                      # the last move, f5
    assert lines[1].startswith("1>.<")           # the cursor on a1
    assert "O" in lines[4]
    tk = Thinking(purpose="move", color=WHITE, elapsed_ms=1200, limit_ms=2000, visits=3055,
                  nodes_per_s=3050, move=s.board.parse("g6"), winrate=0.56)
    view.thinking = tk
    text = "\n".join(t.plain for t in panel_lines(view, 44, 17))
    assert "Engine thinking… 1.2/2.0 s" in text and "3,055 visits" in text
    assert "Best so far: g6 · White 56%" in text and "Ctrl-C" in text
    c = Console(file=io.StringIO(), record=True, width=80)
    c.print(frame(view, 80, 24))
    assert all(len(line) <= 80 for line in c.export_text().splitlines())


def test_frames_fit_80x24_for_15_and_20_boards():
    for size in (15, 20):
        ui = make_ui(size, humans=BOTH)
        drive(ui, ["h8", "i9", "j10", "analyze", "hint", "quit"])
        c = Console(file=io.StringIO(), record=True, width=80, height=24)
        c.print(ui.frame())
        lines = c.export_text().splitlines()
        assert len(lines) <= 23, (size, len(lines))  # one line left for the prompt
        assert all(len(line) <= 80 for line in lines)


def test_a_command_answers_the_save_offer():
    ui = make_ui(9, humans=BOTH)
    drive(ui, ["a1", "a9", "b1", "b9", "c1", "c9", "d1", "d9", "e1", "new", "e5", "quit"])
    assert has(ui, "New game: 9x9 freestyle") and ui.session.ply == 1


def test_completion_of_commands_colours_and_files(tmp_path):
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document
    comp = C.make_completer()

    def words(text):
        return {c.text for c in comp.get_completions(Document(text), CompleteEvent())}

    assert {"save", "swap"} <= words("s")
    assert words("play wh") == {"white"}
    (tmp_path / "game.sgf").write_text("(;GM[4]SZ[15])")
    assert "game.sgf" in words(f"load {tmp_path}/ga") or "me.sgf" in words(f"load {tmp_path}/ga")


def test_parsing_helpers():
    assert looks_like_move("h8") and looks_like_move("7,7") and looks_like_move(" 7 7 ")
    assert not looks_like_move("hint")
    assert C.parse_line("u").name == "undo" and C.parse_line("?").name == "help"
    p = C.parse_line("save my game.sgf")
    assert p.name == "save" and p.args == ("my", "game.sgf")
    assert C.parse_line("udno").suggestion == "undo"
    assert C.parse_line("").kind == "empty"


def test_gomoku_play_with_piped_input(tmp_path):
    """``gomoku play`` with a pipe: plain line input, plain X/O board; the engine answers."""
    from tools import cli, play
    args = cli.build_parser().parse_args(["play", "--size", "9", "--model", "heuristic",
                                          "--visits", "20", "--export-svg",
                                          str(tmp_path / "end.svg")])
    out = io.StringIO()
    rc = play.run(args, inp=io.StringIO("e5\nzz\nquit\n"), out=out)
    text = out.getvalue()
    assert rc == 0
    assert "Engine played" in text and "Unknown command 'zz'" in text
    assert "X black 1 › e5" in text and "[O]" in text
    assert (tmp_path / "end.svg").exists()
    bad = cli.build_parser().parse_args(["play", "--size", "3"])
    assert play.run(bad, inp=io.StringIO(""), out=io.StringIO()) == 2


def _play(argv, inp="quit\n"):
    from tools import cli, play
    out = io.StringIO()
    rc = play.run(cli.build_parser().parse_args(["play", *argv]), inp=io.StringIO(inp), out=out)
    return rc, out.getvalue()


@pytest.fixture
def shipped_models(monkeypatch):
    """The repository's models/ (not a folder from the environment)."""
    for var in ("PYGOMOKU_MODELS", "PYGOMOKU_HOME"):
        monkeypatch.delenv(var, raising=False)


def test_gomoku_play_default_network_follows_the_board_size(shipped_models):
    rc, text = _play(["--size", "8", "--visits", "5"])
    assert rc == 0 and "Engine: gomoku8-4x32, 5 visits" in text
    rc, text = _play(["--size", "15", "--visits", "5"])
    assert rc == 0 and "Engine: freestyle15-5x48-ft, 5 visits" in text
    rc, text = _play(["--size", "8", "--rule", "renju", "--visits", "5"])   # index: renju -> the 15x15 one
    assert rc == 0 and "Engine: freestyle15-4x32, 5 visits" in text


def test_gomoku_play_model_by_shipped_name_and_missing_model(shipped_models, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, text = _play(["--size", "15", "--model", "gomoku8-4x32", "--visits", "5"])
    assert rc == 0 and "Engine: gomoku8-4x32, 5 visits" in text
    rc, text = _play(["--size", "8", "--model", "no-such-model"])
    assert rc == 2 and "no-such-model.json" in text and "not found" in text
    rc, text = _play(["--list-models"])
    assert rc == 0 and "gomoku8-4x32  (8x8)  [index: freestyle@8x8]" in text


def test_gomoku_play_threads_puts_the_network_in_a_worker_process(shipped_models):
    from gomoku_ai.shipped import PlayerFactory
    p = PlayerFactory(thread_num=2)(Rule.FREESTYLE, 15)
    try:
        assert p.thread_num == 2 and p.worker is not None and p.worker.active
    finally:
        p.close()
    assert PlayerFactory()(Rule.FREESTYLE, 15).worker is None
    rc, text = _play(["--threads", "2", "--color", "none", "--max-moves", "3", "--time", "0.2"])
    assert rc == 0 and "Engine: freestyle15-5x48-ft" in text
    with pytest.raises(SystemExit) as e:
        _play(["--threads", "0"])
    assert e.value.code == 2


def test_new_game_on_another_size_switches_the_network(shipped_models):
    from gomoku_ai.shipped import PlayerFactory
    console = Console(file=io.StringIO(), record=True, width=80)
    ui = TerminalUI(GameSession(15, 15, Rule.FREESTYLE, {BLACK}), PlayerFactory(), Limit(visits=5),
                    console, None)

    def net():
        return ui.player.evaluator.network.basename.name
    assert net() == "freestyle15-5x48-ft"
    p15 = ui.player
    ui.cmd_new(["15"])
    assert ui.player is p15                       # the same size: the player is kept
    ui.cmd_new(["16"])
    assert net() == "freestyle-5x48-mix" and "freestyle-5x48-mix" in ui.view.engine   # "freestyle"
    p16 = ui.player
    ui.cmd_new(["17"])
    assert ui.player is p16                       # same network for 17x17: the player is kept
    ui.cmd_new(["20"])
    assert net() == "freestyle20-5x48-ft2" and "freestyle20-5x48-ft2" in ui.view.engine   # its own
    ui.cmd_new(["8"])
    assert net() == "gomoku8-4x32" and "gomoku8-4x32" in ui.view.engine
    ui.cmd_new(["15", "renju"])
    assert net() == "freestyle15-4x32" and ui.player is not p15


# ============================================================================ first contact (issue #17)
class LineReader:
    """Typed lines, one per read; records each (prompt, placeholder) it was asked with."""

    interactive = False

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = list(lines)
        self.asked: List[tuple] = []

    def read(self, message: str, default: str = "", placeholder: str = "") -> str:
        self.asked.append((message, placeholder))
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def _parse_play(argv):
    from tools import cli
    return cli.build_parser().parse_args(["play", *argv])


@pytest.mark.parametrize("argv, said", [
    (["--time", "-1"], "argument --time: '-1' is not a positive number of seconds"),
    (["--time", "0"], "argument --time: '0' is not a positive number of seconds"),
    (["--time", "nan"], "argument --time: 'nan' is not a positive number of seconds"),
    (["--visits", "-5"], "argument --visits: '-5' is not a number of visits"),
    (["--visits", "many"], "argument --visits: 'many' is not a number of visits"),
    (["--size", "15x"], "argument --size: '15x' is not a board size"),
    (["--size", "x"], "argument --size: 'x' is not a board size"),
    (["--max-moves", "0"], "argument --max-moves: '0' is not a number of moves"),
])
def test_play_options_refuse_bad_numbers(argv, said, capsys):
    with pytest.raises(SystemExit) as exit_:
        _parse_play(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "invalid literal" not in err


def test_play_options_accept_good_numbers():
    args = _parse_play(["--time", "0.5", "--visits", "0", "--size", "20x15", "--max-moves", "9"])
    assert (args.time, args.visits, args.size, args.max_moves) == (0.5, 0, "20x15", 9)
    ui = make_ui(9, humans=BOTH)
    drive(ui, ["new 15x", "time inf", "time -3", "visits -5"])
    assert has(ui, "new: '15x' is not a board size", "error")
    assert len([t for t in messages(ui, "error") if t.startswith(("time SECONDS", "visits N"))]) == 3
    assert ui.limit == Limit(visits=30)  # no bad value got through


def test_frame_at_60x20_keeps_the_column_header_and_the_last_answer():
    ui = make_ui(15, humans={BLACK}, visits=20)
    drive(ui, ["h8", "time -3"])
    c = Console(file=io.StringIO(), record=True, width=60, height=20)
    c.print(ui.frame(60, 20))
    lines = c.export_text().splitlines()
    assert len(lines) <= 19                                   # one line left for the prompt
    assert all(len(line) <= 60 for line in lines)
    assert lines[0].lstrip().startswith("a b c d e f g h i j k l m n o")
    panel = " ".join(line[37:].strip() for line in lines)  # beside the board (35 wide) and a gap
    assert "time SECONDS: '-3' is not a positive number of seconds" in panel  # the last answer
    assert "Black: you" in panel and "White: engine" in panel and "Black to move" in panel


def test_frame_in_a_short_narrow_terminal_keeps_the_top_letters():
    ui = make_ui(15, humans=BOTH)
    drive(ui, ["h8", "i9"])
    c = Console(file=io.StringIO(), record=True, width=40, height=20)
    c.print(ui.frame(40, 20))
    lines = c.export_text().splitlines()
    assert len(lines) <= 19 and lines[0].lstrip().startswith("a b c")
    assert "Black to move" in " ".join(" ".join(line.split()) for line in lines)


def test_redo_replays_the_engine_reply_without_searching():
    ui = make_ui(9, visits=20)
    drive(ui, ["e5", "undo"])
    s = ui.session
    assert s.ply == 0 and len(s.future) == 2
    recorded = list(reversed(s.future))
    ui.quit = False
    drive(ui, ["redo"])
    assert s.board.moves == recorded and not s.future
    assert len([t for t in messages(ui) if t.startswith("Engine played")]) == 1  # no new search
    assert has(ui, "Replayed 2 moves", "ok")
    assert s.side == BLACK and not s.engine_to_move()


def _six_move_game(tmp_path) -> str:
    ui = make_ui(9, humans=BOTH)
    path = tmp_path / "six.sgf"
    drive(ui, ["e5", "d4", "f6", "d6", "g7", "c3", f"save {path}", "quit"])
    return str(path)


def test_a_move_in_review_says_the_later_moves_are_dropped_and_undo_brings_them_back(tmp_path):
    path = _six_move_game(tmp_path)
    ui = make_ui(9)
    drive(ui, [f"load {path}", "first", "next", "a1"])
    s = ui.session
    assert s.board.moves == [s.board.parse("e5"), s.board.parse("a1")] and not s.future
    assert has(ui, "A new line starts at move 2: the 5 later moves of the loaded game are dropped "
                   "(undo gets them back)")
    ui.quit = False
    drive(ui, ["undo", "last"])
    assert [s.board.move_name(m) for m in s.board.moves] == ["e5", "d4", "f6", "d6", "g7", "c3"]
    assert has(ui, "'redo' or 'next' replays the 5 moves the new line had dropped")


def test_goto_past_the_end_goes_to_the_last_move_and_keeps_the_names():
    ui = make_ui(9, visits=20)
    drive(ui, ["e5", "goto 100"])
    s = ui.session
    assert s.review and s.ply == 2
    assert has(ui, "goto 100: the game has 2 moves; this is the last.")
    c = Console(file=io.StringIO(), record=True, width=80, height=24)
    c.print(ui.frame(80, 24))
    text = c.export_text()
    assert "Black: you" in text and "White: engine" in text and "?" not in text


def test_save_into_a_missing_folder_is_an_error_and_creates_nothing(tmp_path):
    ui = make_ui(9, humans=BOTH)
    missing = tmp_path / "no" / "such"
    drive(ui, ["e5", f"save {missing / 'x.sgf'}", f"save {missing / 'x.svg'}"])
    errors = messages(ui, "error")
    assert len([e for e in errors if f"the folder {missing} does not exist" in e]) == 2
    assert not (tmp_path / "no").exists()


def test_prompts_follow_the_state(tmp_path):
    path = _six_move_game(tmp_path)
    ui = make_ui(9, humans=BOTH)
    ui.reader = LineReader(["a1", "a9", "b1", "b9", "c1", "c9", "d1", "d9", "e1", "n",
                            f"load {path}", "first", "last"])
    ui.run()
    asked = ui.reader.asked
    over = [a for a in asked if a[0].startswith("game over")]
    assert over and all("move" not in p and all(w in p for w in ("new", "undo", "save", "quit"))
                        for _, p in over)
    at_first = asked[-2]                                    # the review, at the start
    assert "Enter = next" in at_first[0] and "Enter = next" in at_first[1]
    at_last = asked[-1]                                      # the review, after the last move
    assert "Enter" not in at_last[0] and "prev" in at_last[1]
    live = asked[0]
    assert "a move" in live[1]


def test_analyze_mentions_the_digits_only_once_there_is_a_line():
    ui = make_ui(9, visits=20)
    drive(ui, ["e5", "analyze"])
    first = [t for t in messages(ui) if t.startswith("Overlay on")]
    assert first and "digits" not in first[-1]
    ui.quit = False
    ui.reader = LineReader(["hint", "analyze", "analyze"])  # (the hint's prefill is not typed over)
    ui.run()
    again = [t for t in messages(ui) if t.startswith("Overlay on")]
    assert len(again) == 2 and "digits = its line" in again[-1]


def test_export_svg_into_a_missing_folder_is_refused_before_the_game(tmp_path):
    import io
    from tools.tui.app import run
    target = tmp_path / "no-such-dir" / "game.svg"
    out = io.StringIO()
    args = _parse_play(["--export-svg", str(target), "--no-color"])
    assert run(args, inp=io.StringIO("quit\n"), out=out) == 2
    assert "does not exist" in " ".join(out.getvalue().split()) and not target.parent.exists()
