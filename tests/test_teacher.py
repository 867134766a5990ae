"""``gomoku train teacher``: openings cut out of records, and the whole command against a small
fake pbrain engine (a record per game, the opening stones at the start of each, resume)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.records import GameRecord, load_games, read_openings, save_record
from gomoku_ai.rules import Rule
from gomoku_ai.training.teacher import centre_openings, edge_openings, opening_shape, openings_from_records
from tests.test_manager import FAKE
from tools.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]


def _rec(moves):
    return GameRecord(15, 15, Rule.FREESTYLE, [tuple(m) for m in moves])


LONG = [(7, 7), (8, 8), (6, 6), (9, 9), (7, 9), (9, 7), (5, 5), (8, 6), (10, 10), (6, 8),
        (3, 3), (4, 12), (12, 4), (1, 13), (13, 1), (2, 2), (11, 3), (3, 11), (0, 14), (14, 0)]


def test_openings_are_prefixes_of_live_games_within_bounds() -> None:
    recs = [_rec(LONG), _rec(LONG[1:] + LONG[:1]), _rec(LONG[:7])]
    ops = openings_from_records(recs, 10, 3, 6, seed=4, min_rest=5)
    assert len(ops) == 2                            # the 7-move game is too short for 3 + 5
    for op in ops:
        assert 3 <= len(op) <= 6
        assert any(list(map(tuple, r.moves[:len(op)])) == op for r in recs)
    assert len({tuple(o) for o in ops}) == len(ops)
    assert openings_from_records(recs, 10, 3, 6, seed=4, min_rest=5) == ops   # seeded


def test_openings_skip_decided_prefixes_and_other_boards() -> None:
    five = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1), (4, 0)] + LONG[:15]
    assert openings_from_records([_rec(five)], 5, 9, 9, min_rest=0) == []
    assert len(openings_from_records([_rec(five)], 5, 8, 8, min_rest=0)) == 1
    small = GameRecord(10, 10, Rule.FREESTYLE, [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)])
    assert openings_from_records([small], 5, 2, 2, min_rest=0) == []


def test_openings_from_a_smaller_board_are_shifted_onto_the_larger_one() -> None:
    recs = [_rec(LONG), _rec(LONG[1:] + LONG[:1])]
    # without embed_smaller a 15x15 record gives nothing on 20x20
    assert openings_from_records(recs, 10, 3, 6, 20, 20, seed=4, min_rest=5) == []
    offsets = set()
    for seed in range(12):
        ops = openings_from_records(recs, 10, 3, 6, 20, 20, seed=seed, min_rest=5,
                                    embed_smaller=True)
        assert len(ops) == 2
        for op in ops:
            # a record's prefix shifted by an offset that keeps its whole 15x15 board inside
            shifts = [(dx, dy) for r in recs for dx in range(6) for dy in range(6)
                      if [(x + dx, y + dy) for x, y in r.moves[:len(op)]] == op]
            assert len(shifts) == 1, op
            dx, dy = shifts[0]
            offsets.add((dx, dy))
    assert len(offsets) > 3                      # the offsets vary with the seed and the record
    # same-size records draw no offset, so an old seed gives the openings it always gave
    assert (openings_from_records(recs, 10, 3, 6, seed=4, min_rest=5, embed_smaller=True)
            == openings_from_records(recs, 10, 3, 6, seed=4, min_rest=5))


@pytest.mark.parametrize("bad", [dict(count=0), dict(min_plies=0), dict(min_plies=5, max_plies=4)])
def test_openings_bad_bounds(bad) -> None:
    kw = dict(count=3, min_plies=2, max_plies=4)
    kw.update(bad)
    with pytest.raises(ValueError):
        openings_from_records([_rec(LONG)], **kw)


def test_edge_openings_are_live_clusters_by_an_edge() -> None:
    ops = edge_openings(200, 3, 7, 20, 20, seed=5)
    assert len(ops) == 200 and len({tuple(o) for o in ops}) == 200
    assert edge_openings(200, 3, 7, 20, 20, seed=5) == ops              # seeded
    assert edge_openings(200, 3, 7, 20, 20, seed=6) != ops
    sides = set()
    for op in ops:
        assert 3 <= len(op) <= 7 and len(set(op)) == len(op)
        assert all(0 <= x < 20 and 0 <= y < 20 for x, y in op)
        x0, y0 = op[0]
        near = {i for i, d in enumerate((y0, 19 - y0, x0, 19 - x0)) if d <= 3}
        assert near, op                              # the first stone within three lines of an edge
        sides |= near
        for i, (x, y) in enumerate(op[1:], 1):     # each next one within 3 of an earlier stone
            assert any(max(abs(x - a), abs(y - b)) <= 3 for a, b in op[:i]), op
    assert sides == {0, 1, 2, 3}                     # every edge gets openings
    # no opening decides the game: five stones of one colour in a row are never left
    five = edge_openings(300, 9, 9, 6, 6, seed=1, band=0, spread=1)
    from gomoku_ai.board import Board
    for op in five:
        b = Board(6)
        for x, y in op:
            b.push(b.index(x, y))
        assert b.winner is None
    with pytest.raises(ValueError):
        edge_openings(5, 4, 3)
    with pytest.raises(ValueError, match="distinct"):
        edge_openings(100, 1, 1, 5, 5, band=0)        # a 5x5 board has 16 edge squares


def test_opening_shape_is_the_position_up_to_symmetry_and_shift() -> None:
    op = [(7, 7), (8, 7), (8, 9)]
    images = [[(x + 2, y - 3) for x, y in op],          # shifted
              [(y, x) for x, y in op],                  # transposed
              [(14 - x, y) for x, y in op],             # mirrored
              [(14 - y, 14 - x) for x, y in op],        # the anti-diagonal
              [(8, 9), (8, 7), (7, 7)]]                 # another order: Black's two stones swapped
    assert {opening_shape(o) for o in images} == {opening_shape(op)}
    assert opening_shape([(7, 7), (8, 8), (8, 9)]) != opening_shape(op)     # another position
    assert opening_shape([(8, 7), (7, 7), (8, 9)]) != opening_shape(op)     # colours swapped
    black, white = opening_shape(op)             # two Black stones and one White, shifted to 0
    assert len(black) == 2 and len(white) == 1 and black[0] == (0, 0)
    assert min(y for _, y in black + white) == 0
    assert opening_shape([black[0], white[0], black[1]]) == (black, white)    # a fixed point


def test_centre_openings_are_live_clusters_without_the_excluded() -> None:
    ops = centre_openings(300, 3, 5, 15, 15, seed=4)
    assert len(ops) == 300 and centre_openings(300, 3, 5, 15, 15, seed=4) == ops       # seeded
    assert len({opening_shape(o) for o in ops}) == 300        # distinct as positions, not orders
    assert {len(o) for o in ops} == {3, 4, 5}
    for op in ops:
        assert len(set(op)) == len(op)
        assert max(abs(op[0][0] - 7), abs(op[0][1] - 7)) <= 2          # the first stone near the centre
        for i, (x, y) in enumerate(op[1:], 1):
            assert any(max(abs(x - a), abs(y - b)) <= 3 for a, b in op[:i]), op
    # the excluded positions never come back, whatever their orientation or place
    ref = ops[:40]
    moved = [[(14 - y, x) for x, y in o] for o in ref]          # rotated images of 40 of them
    kept = centre_openings(300, 3, 5, 15, 15, seed=4, exclude=moved)
    assert not {opening_shape(o) for o in kept} & {opening_shape(o) for o in ref}
    assert len(kept) == 300
    with pytest.raises(ValueError, match="distinct centre"):
        centre_openings(100, 1, 1, 15, 15, radius=0)           # one square: one opening
    with pytest.raises(ValueError):
        centre_openings(5, 3, 3, radius=-1)


def test_teacher_command_plays_centre_openings(tmp_path: Path, monkeypatch) -> None:
    _, fake, out = _teacher_setup(tmp_path, monkeypatch, 0)
    measured = tmp_path / "measured.txt"
    measured.write_text("0,0, 1,0, 1,3\n")
    argv = ["train", "teacher", "--engine", f"{sys.executable} {fake}", "--centre-openings",
            "--exclude-openings", str(measured), "--games", "2", "--min-plies", "3",
            "--max-plies", "3", "--nodes", "5000", "--nodes-b", "5500", "--out", str(out)]
    assert cli_main(argv) == 0
    ops = read_openings(out / "openings.txt", width=15)
    assert len(ops) == 1 and len(ops[0]) == 3
    assert opening_shape(ops[0]) != opening_shape([(0, 0), (1, 0), (1, 3)])
    command = (out / "command.sh").read_text()
    assert "--centre-openings" in command and f"--exclude-openings {measured}" in command
    assert "--nodes 5000 --nodes-b 5500" in command
    players = json.loads((out / "match" / "tournament.json").read_text())["players"]
    assert [p[-1] for p in players] == ["nodes=5000", "nodes=5500"]     # the two teachers differ
    games = list(load_games(out / "match" / "games"))
    assert len(games) == 2 and all(len(g.moves) > 3 for g in games)
    # --exclude-openings belongs to --centre-openings, and a missing file is refused by name
    assert cli_main(["train", "teacher", "--engine", "x", "--edge-openings", "--exclude-openings",
                     str(measured), "--out", str(tmp_path / "e")]) == 2
    assert cli_main(["train", "teacher", "--engine", "x", "--centre-openings", "--exclude-openings",
                     str(tmp_path / "nope.txt"), "--out", str(tmp_path / "n")]) == 2
    assert cli_main(argv[:-2] + ["--nodes-b", "0", "--out", str(tmp_path / "z")]) == 2


def test_teacher_command_plays_edge_openings(tmp_path: Path, monkeypatch) -> None:
    src, fake, out = _teacher_setup(tmp_path, monkeypatch, 0)
    argv = ["train", "teacher", "--engine", f"{sys.executable} {fake}", "--edge-openings",
            "--games", "2", "--min-plies", "3", "--max-plies", "3", "--size", "20", "--out", str(out)]
    assert cli_main(argv) == 0
    ops = read_openings(out / "openings.txt", width=20)
    assert len(ops) == 1 and len(ops[0]) == 3
    assert "--edge-openings" in (out / "command.sh").read_text()
    games = list(load_games(out / "match" / "games"))
    assert len(games) == 2 and all(g.width == 20 and len(g.moves) > 3 for g in games)
    # records and --edge-openings are one or the other, and one of them is needed
    for bad in (argv[:5] + ["--records", str(src)] + argv[5:], argv[:5] + argv[6:]):
        with pytest.raises(SystemExit) as e:
            cli_main(bad)
        assert e.value.code == 2


def _teacher_setup(tmp_path: Path, monkeypatch, n_records: int) -> tuple:
    """Records to cut openings from, the fake engine's script and the output folder."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    src = tmp_path / "records"
    src.mkdir()
    for i in range(n_records):
        save_record(_rec(LONG[i:] + LONG[:i]), src / f"g{i}.psq")
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    return src, fake, tmp_path / "teach"


def test_teacher_command_plays_records_and_resumes(tmp_path: Path, monkeypatch) -> None:
    src, fake, out = _teacher_setup(tmp_path, monkeypatch, 4)
    argv = ["train", "teacher", "--engine", f"{sys.executable} {fake}", "--records", str(src),
            "--games", "4", "--min-plies", "4", "--max-plies", "6", "--out", str(out)]
    assert cli_main(argv) == 0
    ops = read_openings(out / "openings.txt")
    assert len(ops) == 2
    games = list(load_games(out / "match" / "games"))
    assert len(games) == 4
    for g in games:                                  # each game starts with one of the openings
        assert any(list(map(tuple, g.moves[:len(o)])) == [tuple(m) for m in o] for o in ops)
        assert len(g.moves) > 6
    # a rerun with more games resumes: the openings file is kept, finished games are not replayed
    before = (out / "openings.txt").read_text()
    argv[argv.index("--games") + 1] = "4"
    assert cli_main(argv) == 0
    assert (out / "openings.txt").read_text() == before
    assert len(list((out / "match" / "games").iterdir())) == 4
    lines = (out / "match" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(ln)["termination"] for ln in lines)


def test_teacher_command_refuses_records_size_with_edge_openings(tmp_path: Path, capsys) -> None:
    code = cli_main(["train", "teacher", "--engine", "true", "--edge-openings", "--size", "20",
                     "--records-size", "15", "--out", str(tmp_path / "t")])
    assert code == 2
    assert "--records-size is for --records" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_teacher_command_refuses_records_without_openings(tmp_path: Path) -> None:
    empty = tmp_path / "none"
    empty.mkdir()
    code = cli_main(["train", "teacher", "--engine", "true", "--records", str(empty),
                     "--out", str(tmp_path / "t")])
    assert code == 2
    assert not (tmp_path / "t").exists()


def test_teacher_games_keep_the_evaluation_and_pack_mixes_it_into_the_value(tmp_path: Path,
                                                                             monkeypatch) -> None:
    from gomoku_ai.training.dataset import load_shard
    src, fake, out = _teacher_setup(tmp_path, monkeypatch, 2)
    assert cli_main(["train", "teacher", "--engine", f"{sys.executable} {fake} eval", "--records",
                     str(src), "--games", "2", "--min-plies", "4", "--max-plies", "4",
                     "--out", str(out)]) == 0
    games = list(load_games(out / "match" / "games"))
    assert len(games) == 2 and all(g.source.endswith(".sgf") for g in games)
    comments = games[0].metadata["move_comments"]
    assert comments and all("Eval" in c for c in comments.values())
    plain, mixed = tmp_path / "plain.npz", tmp_path / "mixed.npz"
    base = ["train", "pack", "--records", str(out / "match" / "games"), "--openings",
            str(out / "openings.txt")]
    assert cli_main(base + ["--out", str(plain)]) == 0
    assert cli_main(base + ["--eval-weight", "1", "--eval-scale", "100", "--out", str(mixed)]) == 0
    p, m = load_shard(plain), load_shard(mixed)
    assert set(np.unique(p.z)) <= {-1.0, 0.0, 1.0}
    # the fake says "Eval 10 * stones - 50" before each move: z is tanh of it for the mover
    stones = ((m.cells == 1) | (m.cells == 2)).sum(axis=(1, 2))
    assert np.allclose(m.z, np.tanh((10.0 * stones - 50) / 100.0), atol=1e-6)
    assert (m.zw == 1).all()
    assert cli_main(base + ["--eval-weight", "0.5", "--out", str(tmp_path / "auto.npz")]) == 0
