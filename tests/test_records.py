"""Game records and openings: PSQ, SGF, c-gomoku-cli openings, loading folders, atomic saves."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gomoku_ai.board import IllegalMoveError
from gomoku_ai.records import (BLACK_WINS, DRAW, WHITE_WINS, GameRecord, GameResult,
                               RecordFormatError, format_opening, gomocup_filename_fields,
                               load_games, parse_gomocup_filename, parse_opening_line, read_openings,
                               read_psq, read_sgf, read_sgf_games, save_record, write_openings,
                               write_psq, write_sgf)
from gomoku_ai.rules import BLACK, WHITE, Rule, Termination

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(),
                                reason=f"shared data folder {DATA} is absent (real-data checks only)")
PSQ_DEFAULTS = {"psq": {"levels": (11, 11), "swap": 0, "code": -1}}


# ============================================================================ PSQ
PISKVORK_20 = """\
Piskvorky 20x20, 11:11, 0
10,10,0
11,10,125
11,11,2047
9,9,310
12,12,15
pbrain-embryo21_e.exe
pbrain-rapfi.exe
-1
"""


def test_psq_piskvork_form_reads_and_writes_back_byte_for_byte():
    r = read_psq(PISKVORK_20)
    assert (r.width, r.height) == (20, 20)
    assert r.moves == [(9, 9), (10, 9), (10, 10), (8, 8), (11, 11)]
    assert r.times_ms == [0, 125, 2047, 310, 15]
    assert (r.black, r.white) == ("pbrain-embryo21_e.exe", "pbrain-rapfi.exe")
    assert r.result is None and r.rule is Rule.FREESTYLE
    assert r.metadata == {"psq": {"levels": (11, 11), "swap": 0, "code": -1}}
    assert write_psq(r) == PISKVORK_20


def test_psq_header_spelling_crlf_and_swapped_first_player():
    text = ("Piskvork 20x15, 0:11, 1\r\n1,1,5\r\n20,15,6\r\n"
            "C:\\brains\\pbrain-white.exe\r\nhomo-2\r\n0\r\n")
    r = read_psq(text)
    assert (r.width, r.height) == (20, 15)
    assert r.moves == [(0, 0), (19, 14)]
    # the flag 1 says the second listed player moved first
    assert (r.black, r.white) == ("homo-2", "C:\\brains\\pbrain-white.exe")
    assert r.metadata["psq"] == {"levels": (0, 11), "swap": 1, "code": 0}
    out = write_psq(r)
    assert out.splitlines()[0] == "Piskvorky 20x15, 0:11, 1"
    assert read_psq(out) == r


def test_psq_trailer_code_only_and_moves_without_times():
    r = read_psq("Piskvorky 15x15, 1:1, 0\n8,8\n9,9,40\n-1\n")
    assert r.black is None and r.white is None
    assert r.times_ms == [None, 40]
    assert write_psq(r) == "Piskvorky 15x15, 1:1, 0\n8,8\n9,9,40\n-1\n"


def test_psq_cleaned_dataset_form():
    r = read_psq("8,8\n9,8\n8,9\n")
    assert (r.width, r.height) == (15, 15)
    assert r.moves == [(7, 7), (8, 7), (7, 8)]
    assert r.times_ms is None and r.metadata == {}
    r20 = read_psq("20,20\n1,1\n", size=20)
    assert r20.moves == [(19, 19), (0, 0)]
    assert read_psq("20,15\n", size=(20, 15)).moves == [(19, 14)]


def test_psq_round_trip_of_a_built_record_rectangular():
    rec = GameRecord(20, 15, Rule.FREESTYLE, [(0, 0), (19, 14), (10, 7)], black="a", white="b",
                     times_ms=[1, 2, 3])
    back = read_psq(write_psq(rec))
    assert back == dataclasses.replace(rec, metadata=PSQ_DEFAULTS)


def test_gomocup_filename():
    assert parse_gomocup_filename("3_0_10_1.psq") == BLACK_WINS
    assert parse_gomocup_filename(Path("x/Freestyle15_2/12_4_7_2.psq")) == WHITE_WINS
    assert parse_gomocup_filename("0_1_2_0.PSQ") == DRAW
    assert gomocup_filename_fields("5_3_9_2.psq") == {"round": 5, "player1": 3, "player2": 9,
                                                       "code": 2}
    with pytest.raises(RecordFormatError, match="not a Gomocup"):
        parse_gomocup_filename("game_7.psq")
    with pytest.raises(RecordFormatError):
        parse_gomocup_filename("1_2_3_4.psq")


def test_read_psq_takes_the_result_from_a_gomocup_file_name(tmp_path):
    p = tmp_path / "4_1_2_1.psq"
    p.write_text("8,8\n1,1\n9,8\n1,2\n10,8\n1,3\n11,8\n1,4\n12,8\n")
    r = read_psq(p)
    assert r.result == BLACK_WINS and r.source == str(p)
    assert r.metadata["gomocup"] == {"round": 4, "player1": 1, "player2": 2}
    assert r.board_outcome().winner == BLACK
    assert read_psq(str(p)).moves == r.moves  # a str path works too


# ============================================================================ SGF
def test_sgf_round_trip_with_names_result_rule_times():
    rec = GameRecord(15, 15, Rule.RENJU, [(7, 7), (8, 7), (7, 8)], GameResult(WHITE),
                     black="Black ]x[ \\ y", white="W", times_ms=[None, 120, 7])
    text = write_sgf(rec)
    assert text.startswith("(;GM[4]FF[4]")
    assert "SZ[15]" in text and "RU[renju]" in text and "RE[W+]" in text
    assert ";B[hh];W[ih]C[120ms];B[hi]C[7ms]" in text
    assert "PB[Black \\]x[ \\\\ y]" in text
    assert read_sgf(text) == rec


def test_sgf_rectangular_and_large_boards():
    rec = GameRecord(20, 15, Rule.STANDARD, [(19, 14), (0, 0), (10, 3)], DRAW)
    text = write_sgf(rec)
    assert "SZ[20:15]" in text and "B[to]" in text
    assert read_sgf(text) == rec
    big = GameRecord(32, 30, Rule.CARO, [(31, 29), (26, 0)])
    assert "B[FD];W[Aa]" in write_sgf(big)
    assert read_sgf(write_sgf(big)) == big


def test_sgf_reader_whitespace_escapes_extra_props_and_cgomokucli_output():
    text = """
    (
      ;FF[4]GM[4]GN[17]EV[Rapfi x Embryo]DT[2024.05.01 10:00:00]RO[3.1]RU[0]SZ[15]
      PB[Rapfi] PW[Emb\\]ryo] RE[B+1]TE[Black win by five connection]
      ;B[hh]C[opening move];W[ih]C[opening move]
      ;B[gg] C[
    15ms];W[ii]C[20ms];B[ff]C[1ms];W[jj]C[0ms];B[ee]C[3ms];W[kk]C[2ms];B[dd]C[1ms]
    )
    """
    r = read_sgf(text)
    assert r.rule is Rule.FREESTYLE
    assert (r.black, r.white) == ("Rapfi", "Emb]ryo")
    assert r.result == GameResult(BLACK, Termination.FIVE)
    assert r.moves[:3] == [(7, 7), (8, 7), (6, 6)]
    assert r.times_ms == [None, None, 15, 20, 1, 0, 3, 2, 1]
    assert r.metadata["move_comments"] == {0: "opening move", 1: "opening move"}
    assert r.metadata["sgf"]["EV"] == ["Rapfi x Embryo"]
    assert r.metadata["sgf"]["TE"] == ["Black win by five connection"]
    assert r.to_board().winner == BLACK
    back = read_sgf(write_sgf(r))
    assert back == r


@pytest.mark.parametrize("re_value,expected", [
    ("B+", BLACK_WINS), ("W+", WHITE_WINS), ("0", DRAW), ("Draw", DRAW), ("W+Time", WHITE_WINS),
    ("?", None)])
def test_sgf_result_values(re_value, expected):
    assert read_sgf(f"(;GM[4]SZ[15]RE[{re_value}];B[hh])").result == expected


@pytest.mark.parametrize("ru,rule", [("freestyle", Rule.FREESTYLE), ("Standard", Rule.STANDARD),
                                     ("renju", Rule.RENJU), ("RIF", Rule.RENJU),
                                     ("caro", Rule.CARO), ("1", Rule.STANDARD), ("4", Rule.RENJU)])
def test_sgf_rule_names(ru, rule):
    assert read_sgf(f"(;GM[4]RU[{ru}];B[aa])").rule is rule


def test_sgf_collections():
    one = write_sgf(GameRecord(moves=[(7, 7)]))
    two = write_sgf(GameRecord(moves=[(1, 1), (2, 2)], result=BLACK_WINS))
    games = read_sgf_games(one + "\n" + two)
    assert [g.moves for g in games] == [[(7, 7)], [(1, 1), (2, 2)]]
    with pytest.raises(RecordFormatError, match="2 games"):
        read_sgf(one + two)


# ============================================================================ openings
def test_openings_offset_and_pos_formats():
    text = "# a comment\n\n0,0, 1,-1, 2,2\r\nh8i7j10   # trailing comment\n0,0 1,1\n-1,0,0,-1\n"
    ops = read_openings(text)
    assert ops == [[(7, 7), (8, 6), (9, 9)], [(7, 7), (8, 6), (9, 9)], [(7, 7), (8, 8)],
                   [(6, 7), (7, 6)]]
    assert write_openings(ops[:2]) == "0,0, 1,-1, 2,2\n0,0, 1,-1, 2,2\n"
    assert write_openings(ops[:2], fmt="pos") == "h8i7j10\nh8i7j10\n"


@pytest.mark.parametrize("w,h", [(15, 15), (20, 20), (20, 15), (15, 20), (6, 5)])
def test_openings_round_trip_sizes(w, h):
    ops = [[(0, 0), (w - 1, h - 1), (w // 2, h // 2)], [(w - 1, 0)]]
    for fmt in ("offset", "pos"):
        text = write_openings(ops, fmt=fmt, width=w, height=h)
        assert read_openings(text, width=w, height=h) == ops
    # the centre is floor(size / 2) in both directions
    assert format_opening([(w // 2, h // 2)], width=w, height=h) == "0,0"


def test_openings_refuse_wide_boards_in_pos_format():
    with pytest.raises(ValueError):
        format_opening([(27, 0)], "pos", width=28)


def test_openings_skip_mode_collects_errors():
    errors = []
    ops = read_openings("0,0\n9,9\nh8h8\n1,1\n", on_error="skip", errors=errors)
    assert ops == [[(7, 7)], [(8, 8)]]
    assert [e.line for e in errors] == [2, 3]


# ============================================================================ records & boards
def test_to_board_replays_and_checks():
    rec = GameRecord(15, 15, Rule.FREESTYLE, [(x, 7) if i % 2 == 0 else (x, 0)
                                              for i, x in enumerate([3, 3, 4, 4, 5, 5, 6, 6, 7])])
    b = rec.to_board()
    assert b.winner == BLACK and rec.first_five() == 8
    assert rec.board_outcome().termination is Termination.FIVE
    assert rec.flat_moves()[0] == 7 * 15 + 3
    assert len(rec.to_board(upto=3).moves) == 3
    rec.moves.append((3, 7))  # mutated past validation: to_board still refuses it
    with pytest.raises(IllegalMoveError, match="occupied"):
        rec.to_board()
    with pytest.raises(ValueError, match="repeats"):
        GameRecord(moves=[(1, 1), (1, 1)])
    with pytest.raises(ValueError, match="off the"):
        GameRecord(width=20, height=15, moves=[(5, 15)])


def test_from_board_and_times_normalisation():
    rec = GameRecord(moves=[(3, 7), (3, 0), (4, 7), (4, 0), (5, 7), (5, 0), (6, 7), (6, 0), (7, 7)])
    again = GameRecord.from_board(rec.to_board(), black="x")
    assert again.moves == rec.moves and again.black == "x"
    assert again.result == GameResult(BLACK, Termination.FIVE)
    assert GameRecord.from_board(rec.to_board(upto=4)).result is None
    assert GameRecord(moves=[(1, 1)], times_ms=[None]).times_ms is None


@pytest.mark.parametrize("te,term", [("Draw by adjudication", Termination.ADJUDICATION),
                                     ("White win by adjudication", Termination.RESIGNATION),
                                     ("White win by time forfeit", Termination.TIME),
                                     ("Draw by fullfilled board", Termination.BOARD_FULL),
                                     ("board_full", Termination.BOARD_FULL),
                                     ("protocol", Termination.PROTOCOL),
                                     ("something else", None)])
def test_sgf_termination_texts(te, term):
    r = read_sgf(f"(;GM[4]RE[W+]TE[{te}];B[hh])")
    assert r.result.termination is term
    assert read_sgf(write_sgf(r)) == r


def test_save_record_is_atomic_and_picks_the_format(tmp_path, monkeypatch):
    rec = GameRecord(moves=[(7, 7), (8, 8)], black="a", white="b", times_ms=[3, 4])
    psq, sgf = tmp_path / "g.psq", tmp_path / "g.sgf"
    save_record(rec, psq)
    save_record(rec, sgf)
    assert read_psq(psq).moves == rec.moves and read_sgf(sgf) == rec
    with pytest.raises(ValueError, match="extension"):
        save_record(rec, tmp_path / "g.txt")

    def boom(fd):
        raise OSError("disk full")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        save_record(GameRecord(moves=[(0, 0)]), psq)
    assert read_psq(psq).moves == rec.moves  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.psq", "g.sgf"]  # no temp left


def test_load_games_raises_or_skips(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "1_0_1_1.psq").write_text("8,8\n9,9\n")
    (tmp_path / "sub" / "b.sgf").write_text(write_sgf(GameRecord(moves=[(1, 1)])) * 2)
    (tmp_path / "sub" / "bad.psq").write_text("8,8\n8,8\n")
    (tmp_path / "notes.json").write_text("{}")
    with pytest.raises(RecordFormatError, match="bad.psq, line 2: duplicate"):
        list(load_games(tmp_path))
    loader = load_games(tmp_path, on_error="skip")
    games = list(loader)
    assert [len(g) for g in games] == [2, 1, 1]
    assert games[0].result == BLACK_WINS
    assert len(loader.skipped) == 1 and loader.skipped[0].path.endswith("bad.psq")
    assert "line 2" in loader.skipped[0].reason
    assert [len(g) for g in load_games([tmp_path / "1_0_1_1.psq"])] == [2]


# ============================================================================ malformed input
BAD_CASES = [
    # (file name, text, line, reason fragment)
    ("coords.psq", "8,8\n9,x\n", 2, "bad coordinates"),
    ("offboard.psq", "8,8\n16,3\n", 2, "off the 15x15 board"),
    ("zero.psq", "Piskvorky 20x20, 1:1, 0\n0,5,0\n-1\n", 2, "off the 20x20 board"),
    ("dup.psq", "8,8\n9,9\n\n8,8\n", 4, "duplicate move 3"),
    ("header.psq", "Piskvorky 20by20, 1:1, 0\n1,1,0\n", 1, "bad header"),
    ("header2.psq", "Gomoku game\n1,1\n", 1, "bad header"),
    ("size.psq", "Piskvorky 40x40, 1:1, 0\n", 1, "outside"),
    ("trailer.psq", "Piskvorky 15x15, 1:1, 0\n1,1,0\nonly-one-name\n-1\n", 3, "trailer"),
    ("late.psq", "Piskvorky 15x15, 1:1, 0\n1,1,0\n-1\n2,2,0\n", 4, "move after the trailer"),
    ("unclosed.sgf", "(;GM[4]SZ[15]\n;B[hh]\n;W[ii", 3, "unbalanced '['"),
    ("open.sgf", "(;GM[4]SZ[15]\n;B[hh];W[ii]\n", 1, "unbalanced '('"),
    ("close.sgf", "(;GM[4];B[hh])\n)\n", 2, "unbalanced ')'"),
    ("gm.sgf", "(;FF[4]\nGM[1]SZ[19];B[dd])", 2, "unknown game GM[1]"),
    ("var.sgf", "(;GM[4];B[hh]\n(;W[ii])(;W[jj]))", 2, "variations"),
    ("sgfcoords.sgf", "(;GM[4];B[hh];W[i])", 1, "bad coordinates"),
    ("sgfoff.sgf", "(;GM[4]SZ[15]\n;B[hh];W[pa])", 2, "off the 15x15 board"),
    ("sgfdup.sgf", "(;GM[4]SZ[15]\n;B[hh]\n;W[hh])", 3, "duplicate move 2"),
    ("order.sgf", "(;GM[4];B[hh];B[ii])", 1, "alternate"),
    ("rule.sgf", "(;GM[4]\nRU[japanese];B[hh])", 2, "unknown rule"),
    ("setup.sgf", "(;GM[4]AB[hh][ii];W[jj])", 1, "setup stones"),
    ("junk.sgf", "hello (;GM[4])", 1, "expected '('"),
    ("sz.sgf", "(;GM[4]SZ[a:b];B[aa])", 1, "bad board size"),
    ("offset.txt", "0,0, 1,1\n0,0, 9,0\n", 2, "off the 15x15 board"),
    ("dupop.txt", "# c\n0,0, 1,1, 0,0\n", 2, "duplicate move 3"),
    ("posdup.txt", "h8i9h8\n", 1, "duplicate move 3"),
    ("odd.txt", "\n\n0,0, 1\n", 3, "odd number"),
    ("tok.txt", "0,0, 1,x\n", 1, "bad offset"),
    ("pos.txt", "h8 i9 ?\n", 1, "bad move"),
]


def _reader(name):
    if name.endswith(".psq"):
        return read_psq
    if name.endswith(".sgf"):
        return read_sgf
    return read_openings


@pytest.mark.parametrize("name,text,line,reason", BAD_CASES, ids=[c[0] for c in BAD_CASES])
def test_malformed_input_names_file_line_and_reason(tmp_path, name, text, line, reason):
    p = tmp_path / name
    p.write_text(text, newline="")
    with pytest.raises(RecordFormatError) as info:
        _reader(name)(p)
    err = info.value
    assert err.path == str(p) and err.line == line and reason in err.reason
    assert str(p) in str(err) and f"line {line}" in str(err) and reason in str(err)
    with pytest.raises(RecordFormatError) as info2:  # given as text: no file, same line
        _reader(name)(text)
    assert info2.value.path is None and info2.value.line == line


def test_missing_file_is_not_a_format_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_psq(tmp_path / "nope.psq")
    with pytest.raises(FileNotFoundError):
        read_sgf(str(tmp_path / "nope.sgf"))


# ============================================================================ property tests
_PSQ_NAME = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
                    min_size=1, max_size=12).filter(
    lambda s: s.strip() and not s.strip().lstrip("-").isdigit() and "," not in s)


@st.composite
def games(draw, names=st.text(max_size=12)):
    w = draw(st.integers(5, 32))
    h = draw(st.integers(5, 32))
    flat = draw(st.lists(st.integers(0, w * h - 1), unique=True, max_size=40))
    moves = [(m % w, m // w) for m in flat]
    times = draw(st.none() | st.lists(st.none() | st.integers(0, 10**7),
                                      min_size=len(moves), max_size=len(moves)))
    if times is not None and all(t is None for t in times):
        times = None
    result = draw(st.sampled_from([None, BLACK_WINS, WHITE_WINS, DRAW,
                                   GameResult(WHITE, Termination.TIME)]))
    pair = draw(st.none() | st.tuples(names, names))
    black, white = pair if pair else (None, None)
    return GameRecord(w, h, draw(st.sampled_from(list(Rule))), moves, result, black, white, times)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_sgf_round_trip_property(rec):
    text = write_sgf(rec)
    back = read_sgf(text)
    assert back == rec
    assert write_sgf(back) == text


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games(names=_PSQ_NAME))
def test_psq_round_trip_property(rec):
    text = write_psq(rec)
    back = read_psq(text, rule=rec.rule)  # PSQ carries neither the rule nor the result
    assert back == dataclasses.replace(rec, result=None, metadata=PSQ_DEFAULTS)
    assert write_psq(back) == text
    if rec.times_ms is None:  # the header-less dataset form of the same moves
        bare = "".join(f"{x + 1},{y + 1}\n" for x, y in rec.moves) or None
        if bare:
            assert read_psq(bare, size=(rec.width, rec.height)).moves == rec.moves


@settings(max_examples=60, deadline=None)
@given(games())
def test_openings_round_trip_property(rec):
    op = rec.moves
    if not op:
        return
    for fmt in ("offset",) + (("pos",) if rec.width <= 26 else ()):
        line = format_opening(op, fmt, rec.width, rec.height)
        assert parse_opening_line(line, rec.width, rec.height) == op


# ============================================================================ real data
@needs_data
def test_all_shared_opening_files():
    folder = DATA / "openings"
    files = sorted(folder.glob("*.txt"))
    assert files, f"no opening files in {folder}"
    for f in files:
        width = 20 if "20x20" in f.name or "piskvork" in f.name else 15
        ops = read_openings(f, width=width)
        assert ops and all(ops), f
        # written back in the same format, they read the same
        assert read_openings(write_openings(ops, width=width), width=width) == ops
    derived = read_openings(folder / "gomocup2024_freestyle15_derived.txt")
    assert len(derived) == 12
    judge = read_openings(folder / "gomocupjudge_openings_20x20.txt", width=20)
    assert len(judge) == 6 and len(judge[-1]) == 41  # the last line has no spaces at all
    # Piskvork's own file: 41 openings, of which one does not fit a 15x15 board
    assert len(read_openings(folder / "piskvork_openings.txt", width=20)) == 41
    with pytest.raises(RecordFormatError, match=r"piskvork_openings.txt, line 41: .*off the 15x15"):
        read_openings(folder / "piskvork_openings.txt")
    errors = []
    assert len(read_openings(folder / "piskvork_openings.txt", on_error="skip",
                             errors=errors)) == 40
    assert [e.line for e in errors] == [41]


@needs_data
def test_gomocup_sample_results_match_the_board():
    root = DATA / "gomocup2024_freestyle15"
    files = sorted(root.rglob("*.psq"))
    assert len(files) > 1000
    sample = files[:: len(files) // 50][:50]
    openings = read_openings(DATA / "openings" / "gomocup2024_freestyle15_derived.txt")
    fives = 0
    for f in sample:
        try:
            r = read_psq(f)
        except RecordFormatError as e:  # the dataset's few illegal games repeat a square
            assert "duplicate move" in e.reason and e.path == str(f)
            continue
        assert (r.width, r.height) == (15, 15) and r.rule is Rule.FREESTYLE
        assert r.result == parse_gomocup_filename(f)
        assert any(r.moves[:len(o)] == o for o in openings), f
        b = r.to_board()
        if b.winner is not None:  # the last move made five: the file name agrees
            fives += 1
            assert r.result.winner == b.winner, f
            assert b.winner == (BLACK if len(r.moves) % 2 else WHITE)
            assert r.first_five() == len(r.moves) - 1  # nothing was played after the five
        elif r.result.is_draw:
            assert b.is_full(), f
    assert fives >= 40


@needs_data
def test_gomocup_illegal_game_is_reported_with_line():
    f = DATA / "gomocup2024_freestyle15" / "Freestyle15_2" / "10_20_24_1.psq"
    if not f.exists():
        pytest.skip(f"{f} is not in this copy of the data")
    with pytest.raises(RecordFormatError) as info:
        read_psq(f)
    assert info.value.line == 220 and "duplicate move 220" in str(info.value)
    loader = load_games([f, f.with_name("10_23_20_2.psq")], on_error="skip")
    assert list(loader) == [] and len(loader.skipped) == 2
