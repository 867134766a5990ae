"""Unit tests of protocol.lines: parsing manager commands and engine replies, formatting both."""
from __future__ import annotations

import pytest

from protocol import lines as L


# ------------------------------------------------------------------------------------------ commands
@pytest.mark.parametrize("eol", ["", "\n", "\r\n", "\r"])
@pytest.mark.parametrize("text, expected", [
    ("START 15", L.Start(15, 15)),
    ("start 20", L.Start(20, 20)),
    ("START 15 15", L.Start(15, 15)),
    ("START 20 15", L.Start(20, 15)),
    ("START 15 big", L.Start(15, 15)),
    ("RECTSTART 20,15", L.RectStart(20, 15)),
    ("rectstart 20, 15", L.RectStart(20, 15)),
    ("RESTART", L.Restart()),
    ("BEGIN", L.Begin()),
    ("Begin", L.Begin()),
    ("TURN 7,8", L.Turn(7, 8)),
    ("turn  7 , 8 ", L.Turn(7, 8)),
    ("TURN -1,-1", L.Turn(-1, -1)),
    ("BOARD", L.Board()),
    ("board", L.Board()),
    ("YXBOARD", L.YxBoard()),
    ("SWAP2BOARD", L.Swap2Board()),
    ("7,7,1", L.StoneLine(7, 7, 1)),
    (" 10, 3 ,2", L.StoneLine(10, 3, 2)),
    ("0,0,3", L.StoneLine(0, 0, 3)),
    ("7,8", L.PointLine(7, 8)),
    ("DONE", L.Done()),
    ("done", L.Done()),
    ("INFO timeout_turn 1000", L.Info("timeout_turn", "1000")),
    ("INFO TIMEOUT_TURN 1000", L.Info("timeout_turn", "1000")),
    ("info folder C:\\My Documents\\x", L.Info("folder", "C:\\My Documents\\x")),
    ("INFO evaluate 3,4", L.Info("evaluate", "3,4")),
    ("INFO pondering", L.Info("pondering", "")),
    ("END", L.End()),
    ("ABOUT", L.About()),
    ("TAKEBACK 3,4", L.Takeback(3, 4)),
    ("PLAY 3,4", L.Play(3, 4)),
    ("YXSTOP", L.YxStop()),
    ("STOP", L.Stop()),
    ("yxshowforbid", L.YxShowForbid()),
    ("YXSHOWINFO", L.YxShowInfo()),
    ("YXHASHCLEAR", L.YxHashClear()),
    ("", L.Empty()),
    ("   ", L.Empty()),
    ("FOO bar", L.Unknown("FOO bar")),
    ("YXNBEST 3", L.YxNBest(3)),
    ("yxsearchdefend", L.YxSearchDefend()),
    ("YXBALANCEONE 12", L.Unsupported("YXBALANCEONE")),
    ("7", L.Unknown("7")),
])
def test_parse_command(text, expected, eol):
    assert L.parse_command(text + eol) == expected


def test_parse_command_accepts_bytes_and_bad_utf8():
    assert L.parse_command(b"START 15\r\n") == L.Start(15, 15)
    got = L.parse_command(b"\xff\xfeSTART 15")
    assert isinstance(got, L.Unknown)
    assert "\ufffd" in got.text


@pytest.mark.parametrize("text, word", [
    ("START", "START"), ("START abc", "START"), ("START -", "START"),
    ("TURN", "TURN"), ("TURN 7", "TURN"), ("TURN a,b", "TURN"), ("TURN 7,7,7", "TURN"),
    ("TAKEBACK x", "TAKEBACK"), ("PLAY 1;2", "PLAY"), ("RECTSTART 20", "RECTSTART"),
    ("INFO", "INFO"), ("7,x,1", "DATA"), ("1,2,3,4", "DATA"), ("1,", "DATA"),
    ("TURN 1234567890123,1", "TURN"), ("9" * 5000 + ",1", "DATA"),
])
def test_parse_command_errors(text, word):
    with pytest.raises(L.ProtocolError) as ei:
        L.parse_command(text)
    assert ei.value.command == word
    assert str(ei.value)


def test_info_int_value():
    assert L.Info("timeout_turn", "1000").int_value() == 1000
    assert L.Info("time_left", "-50").int_value() == -50
    assert L.Info("time_left", "2147483647").int_value() == 2147483647
    assert L.Info("max_memory", "350.0").int_value() == 350
    for bad in ("", "abc", "nan", "inf", "1e999"):
        with pytest.raises(L.ProtocolError):
            L.Info("x", bad).int_value()


def test_command_words_cover_the_parser():
    for w in L.COMMAND_WORDS:
        try:
            cmd = L.parse_command(w + " 1,1")
        except L.ProtocolError:
            continue
        assert not isinstance(cmd, L.Unknown), w


# ------------------------------------------------------------------------------------------ brain output
def test_format_basic():
    assert L.format_ok() == "OK"
    assert L.format_move(7, 8) == "7,8"
    assert L.format_moves([(7, 7), (8, 7), (9, 9)]) == "7,7 8,7 9,9"
    assert L.format_swap() == "SWAP"
    assert L.format_error("bad size") == "ERROR bad size"
    assert L.format_error("") == "ERROR"
    assert L.format_unknown("FOO bar") == "UNKNOWN FOO bar"
    assert L.format_suggest(3, 4) == "SUGGEST 3,4"
    with pytest.raises(ValueError):
        L.format_moves([])


def test_format_message_is_one_nonempty_line():
    assert L.format_message("hello") == "MESSAGE hello"
    assert L.format_message("a\r\nb\tc  ") == "MESSAGE a b c"
    assert L.format_message("") == "MESSAGE -"
    assert L.format_message("  \n ") == "MESSAGE -"
    assert L.format_debug("") == "DEBUG -"
    for s in (L.format_message("x\n"), L.format_error("y\r"), L.format_unknown("z \n")):
        assert "\n" not in s and "\r" not in s and not s.endswith(" ")


def test_format_about():
    line = L.format_about({"name": "pygomoku", "version": "0.1", "author": 'A "B" C', "country": "CZ"})
    assert line == 'name="pygomoku", version="0.1", author="A \'B\' C", country="CZ"'
    import re
    assert re.fullmatch(r'name="[^"]+"(, *\w+="[^"]*")*', line)
    assert L.parse_about_reply(line)["author"] == "A 'B' C"
    with pytest.raises(ValueError):
        L.format_about({})


def test_format_forbid():
    assert L.format_forbid([(9, 12), (10, 11)]) == "FORBID 09121011."
    assert L.format_forbid([]) == "FORBID ."
    assert L.parse_forbid_reply("FORBID 09121011.") == [(9, 12), (10, 11)]
    assert L.parse_forbid_reply("FORBID .") == []
    with pytest.raises(ValueError):
        L.format_forbid([(100, 1)])
    with pytest.raises(ValueError):
        L.parse_forbid_reply("FORBID 091.")


# ------------------------------------------------------------------------------------------ manager side
@pytest.mark.parametrize("line, tolerant, strict", [
    ("7,7", (7, 7), (7, 7)),
    ("7,7\n", (7, 7), (7, 7)),
    ("7,7\r\n", (7, 7), (7, 7)),
    ("7, 7", (7, 7), (7, 7)),        # strtol skips leading spaces
    (" 7,7", (7, 7), (7, 7)),
    ("7 ,7", (7, 7), None),          # c-gomoku-cli: ',' must follow the number
    ("7,7 ", (7, 7), None),          # c-gomoku-cli: a trailing space is rejected (P3)
    ("10,12", (10, 12), (10, 12)),
    ("OK", None, None),
    ("SUGGEST 7,7", None, None),
    ("7,7,1", None, None),
    ("7;7", None, None),
    ("MESSAGE 7,7", None, None),
    ("", None, None),
])
def test_parse_move_reply(line, tolerant, strict):
    assert L.parse_move_reply(line) == tolerant
    assert L.parse_move_reply_strict(line) == strict


def test_parse_moves_reply():
    assert L.parse_moves_reply("SWAP") == L.SWAP
    assert L.parse_moves_reply("swap please") == L.SWAP
    assert L.parse_moves_reply("7,7 8,7 9,9") == [(7, 7), (8, 7), (9, 9)]
    assert L.parse_moves_reply("7,7") == [(7, 7)]
    assert L.parse_moves_reply("7,7 x") is None
    assert L.parse_moves_reply("") is None


@pytest.mark.parametrize("line, kind, moves", [
    ("OK", L.ReplyKind.OK, ()),
    ("ok", L.ReplyKind.OK, ()),
    ("ERROR bad", L.ReplyKind.ERROR, ()),
    ("UNKNOWN FOO", L.ReplyKind.UNKNOWN, ()),
    ("MESSAGE depth 1", L.ReplyKind.MESSAGE, ()),
    ("message hi", L.ReplyKind.MESSAGE, ()),
    ("DEBUG x", L.ReplyKind.DEBUG, ()),
    ("SUGGEST 3,4", L.ReplyKind.SUGGEST, ((3, 4),)),
    ("FORBID 0912.", L.ReplyKind.FORBID, ((9, 12),)),
    ("SWAP", L.ReplyKind.SWAP, ()),
    ("7,7", L.ReplyKind.MOVE, ((7, 7),)),
    ("7,7 8,7", L.ReplyKind.MOVES, ((7, 7), (8, 7))),
    ('name="x", version="1"', L.ReplyKind.ABOUT, ()),
    ("hello world", L.ReplyKind.OTHER, ()),
])
def test_classify_reply(line, kind, moves):
    r = L.classify_reply(line)
    assert r.kind is kind
    assert r.moves == moves


def test_parse_about_reply():
    d = L.parse_about_reply('name="Foo", version="0.1",author="Us" , country="CZ"')
    assert d == {"name": "Foo", "version": "0.1", "author": "Us", "country": "CZ"}
    assert L.parse_about_reply("Foo engine 1.0") == {"name": "Foo engine 1.0"}
    assert L.parse_about_reply("") == {}


def test_manager_formatters_round_trip():
    assert L.parse_command(L.format_start(15)) == L.Start(15, 15)
    assert L.parse_command(L.format_rectstart(20, 15)) == L.RectStart(20, 15)
    assert L.parse_command(L.format_turn(3, 4)) == L.Turn(3, 4)
    assert L.parse_command(L.format_takeback(3, 4)) == L.Takeback(3, 4)
    assert L.parse_command(L.format_play(3, 4)) == L.Play(3, 4)
    assert L.parse_command(L.format_info("TIME_LEFT", 500)) == L.Info("time_left", "500")
    lines = L.format_board([(7, 7, 1), (8, 8, 2)])
    assert lines == ["BOARD", "7,7,1", "8,8,2", "DONE"]
    assert [L.parse_command(x) for x in lines] == [L.Board(), L.StoneLine(7, 7, 1), L.StoneLine(8, 8, 2),
                                                   L.Done()]
    assert L.format_board([], "YXBOARD") == ["YXBOARD", "DONE"]
    assert L.format_swap2board([(1, 2)]) == ["SWAP2BOARD", "1,2", "DONE"]
    with pytest.raises(ValueError):
        L.format_start(20, 15)
    with pytest.raises(ValueError):
        L.format_info("bad key", 1)


def test_clean_text():
    assert L.clean_text("a\x00b\x1bc") == "a b c"
    assert L.clean_text("  x  y ") == "x y"
    assert L.strip_line(b"START 15\r\n") == "START 15"


def test_line_buffer_splits_every_line_end_and_cuts_long_lines() -> None:
    from protocol.lines import LineBuffer
    buf = LineBuffer(max_bytes=8)
    assert buf.feed(b"STA") == []
    assert buf.feed(b"RT 15\r\nINFO a 1\rBEG") == [b"START 15", b"INFO a 1"]
    assert buf.feed(b"IN\n\n\nEND") == [b"BEGIN"]
    assert buf.flush() == [b"END"] and buf.flush() == []
    assert buf.feed(b"0123456789") == [b"01234567"] and buf.cut == 1
    # the rest of a cut line is dropped up to its line end, however it is chunked
    assert buf.feed(b"abc") == [] and buf.feed(b"def\nOK\n") == [b"OK"]
    assert buf.feed(b"0123456789ABCDEFGH\nX\n") == [b"01234567", b"X"] and buf.cut == 2
    assert buf.feed(b"01234567\n") == [b"01234567"] and buf.cut == 2     # exactly max_bytes: not cut
    assert buf.feed(b"0123") == [] and buf.feed(b"45678") == [b"01234567"] and buf.flush() == []


def test_line_buffer_gives_one_line_for_a_10_mb_line() -> None:
    from protocol.lines import LineBuffer
    buf = LineBuffer(max_bytes=1 << 20)
    data = b"X" * (10 << 20) + b"\r\nABOUT\r\n"
    out = [line for i in range(0, len(data), 65536) for line in buf.feed(data[i:i + 65536])]
    assert out == [b"X" * (1 << 20), b"ABOUT"] and buf.cut == 1
    whole = LineBuffer(max_bytes=1 << 20)
    assert whole.feed(data) == [b"X" * (1 << 20), b"ABOUT"]   # in one chunk too
