"""``gomoku train annotate``: a fake pbrain teacher (tests/test_manager.py's, printing Rapfi-style
``Eval`` messages) asked about the positions of a finished tournament; the positions, targets and
values of the shard, resume, a cut-short annotations file, and refused sources."""
from __future__ import annotations

import json
import lzma
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.board import Board
from gomoku_ai.training.dataset import load_shard
from tests.test_manager import FAKE
from tools.cli import main as cli_main
from tools.train.annotate import AnnotateError, SourceGame, annotated_games, game_positions, read_annotations

# Black ("ours") makes five on row 0 at ply 8; the opening is the first two stones
WIN = [(0, 0), (9, 9), (1, 0), (9, 8), (2, 0), (8, 9), (3, 0), (8, 7), (4, 0)]
# White ("ours") loses; 3 opening stones; the game ends in a forfeit (no five on the board)
FORFEIT = [(7, 7), (8, 8), (6, 6), (5, 5), (9, 9), (4, 4)]


#: the teacher's moves, in the order it is asked (the fake answers FAKE_MOVES first): empty points of each
#: position of "ours" (game 0: plies 2, 4, 6, 8; game 1: plies 3, 5)
TEACHER = [(9, 0), (9, 1), (9, 2), (9, 3), (0, 9), (1, 9)]


def _tournament(folder: Path, size: int = 10) -> Path:
    folder.mkdir(parents=True)
    (folder / "tournament.json").write_text(json.dumps({"width": size, "height": size}))
    rows = [dict(game=0, black="ours", white="opp", opening_plies=2, moves=[list(m) for m in WIN]),
            dict(game=1, black="opp", white="ours", opening_plies=3, moves=[list(m) for m in FORFEIT])]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.fixture
def setup(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    monkeypatch.setenv("FAKE_MOVES", ";".join(f"{x},{y}" for x, y in TEACHER))
    fake = tmp_path / "fake.py"
    fake.write_text(FAKE)
    src = _tournament(tmp_path / "t")
    out = tmp_path / "ann"
    argv = ["train", "annotate", "--engine", f"{sys.executable} {fake} eval", "--nodes", "1000",
            "--games", str(src), "--player", "ours", "--eval-weight", "0.5", "--eval-scale", "100",
            "--out", str(out)]
    return argv, src, out


def test_annotate_asks_the_teacher_about_the_players_positions_and_packs_them(setup) -> None:
    argv, src, out = setup
    assert cli_main(argv) == 0
    anns = read_annotations(out / "annotations.jsonl")
    assert sorted(anns) == [f"{src}#0", f"{src}#1"]
    # ours is Black in game 0 (plies 2, 4, 6, 8 after a 2-stone opening), White in game 1 (3 and 5)
    assert anns[f"{src}#0"]["plies"] == [2, 4, 6, 8]
    assert anns[f"{src}#1"]["plies"] == [3, 5]
    pos = load_shard(out / "annotated.npz")
    assert len(pos) == 6 and pos.shape == (10, 10)
    assert sorted(set(pos.game.tolist())) == [0, 1]
    rows = [(WIN, p, 1.0) for p in (2, 4, 6, 8)] + [(FORFEIT, p, None) for p in (3, 5)]
    for i, (moves, ply, result) in enumerate(rows):
        b = Board(10, 10)
        for x, y in moves[:ply]:
            b.push(b.index(x, y))
        assert np.array_equal(pos.cells[i], b.cells) and pos.stm[i] == b.side_to_move
        assert pos.last[i] == b.index(*moves[ply - 1])
        # the policy target is the teacher's move, not the game's
        assert pos.move[i] == b.index(*TEACHER[i])
        v = math.tanh((10 * ply - 50) / 100)      # the fake's "Eval 10 * stones - 50", the mover's view
        want = v if result is None else 0.5 * result + 0.5 * v
        assert pos.z[i] == pytest.approx(want, abs=1e-6) and pos.zw[i] == 1.0
    assert "gomoku train annotate" in (out / "command.sh").read_text()


def test_annotated_games_gives_the_answers_with_the_games_they_answer(tmp_path: Path) -> None:
    src = _tournament(tmp_path / "t")
    rows = [dict(json.loads(line), winner=w)
            for line, w in zip((src / "results.jsonl").read_text().splitlines(), ("black", "white"))]
    (src / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ann = tmp_path / "answers.jsonl"
    ann.write_text(json.dumps({"key": f"{src}#1", "plies": [3, 5], "moves": [[0, 9], [1, 9]],
                               "evals": ["12", None]}) + "\n")
    anns, games = annotated_games(ann)
    assert list(anns) == [f"{src}#1"] and anns[f"{src}#1"]["plies"] == [3, 5]
    # only the answered game, with what the analyses need of its row: moves, opening, players, winner
    assert [g.key for g in games] == [f"{src}#1"]
    g = games[0]
    assert g.moves == FORFEIT and g.opening_plies == 3 and (g.width, g.height) == (10, 10)
    assert (g.black, g.white, g.winner) == ("opp", "ours", "white")
    # an answer whose game its results file lacks is refused, naming the annotations file
    ann.write_text(json.dumps({"key": f"{src}#7", "plies": [3], "moves": [[0, 9]], "evals": ["1"]}) + "\n")
    with pytest.raises(AnnotateError, match="answers.jsonl.*#7"):
        annotated_games(ann)


def test_annotate_resumes_without_asking_again(setup, capsys) -> None:
    argv, src, out = setup
    assert cli_main(argv) == 0
    before = (out / "annotations.jsonl").read_text()
    first = load_shard(out / "annotated.npz")
    capsys.readouterr()
    assert cli_main(argv) == 0
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["done"]["games"] == 0 and last["positions"] == 6
    assert (out / "annotations.jsonl").read_text() == before
    # a run killed while writing its last line: that game is dropped and asked again
    (out / "annotations.jsonl").write_text(before.splitlines()[0] + "\n" + before.splitlines()[1][:25])
    assert cli_main(argv) == 0
    assert sorted(read_annotations(out / "annotations.jsonl")) == [f"{src}#0", f"{src}#1"]
    again = load_shard(out / "annotated.npz")
    # game 0 was kept as it was; game 1 was asked again, by a fresh teacher that starts its script over
    assert again.move.tolist()[:4] == first.move.tolist()[:4] and np.allclose(again.z, first.z)
    assert again.move.tolist()[4:] == [y * 10 + x for x, y in TEACHER[:2]]


def test_annotate_refuses_a_damaged_annotations_file_and_bad_sources(setup, tmp_path: Path, capsys) -> None:
    argv, src, out = setup
    out.mkdir()
    (out / "annotations.jsonl").write_text("not json\n{}\n")
    assert cli_main(argv) == 2
    assert "annotations.jsonl, line 1" in capsys.readouterr().err
    # a results file says no board size: --size is needed
    plain = tmp_path / "r.jsonl.xz"
    plain.write_bytes(lzma.compress((src / "results.jsonl").read_bytes()))
    bad = argv[:argv.index("--games") + 1] + [str(plain)] + argv[argv.index("--games") + 2:]
    bad[bad.index("--out") + 1] = str(tmp_path / "o2")
    assert cli_main(bad) == 2
    assert "give --size" in capsys.readouterr().err
    assert cli_main(bad + ["--size", "10"]) == 0
    assert len(load_shard(tmp_path / "o2" / "annotated.npz")) == 6
    # two board sizes in one run, and a row that is not a game
    other = _tournament(tmp_path / "t15", 15)
    two = argv[:argv.index("--games") + 2] + [str(other)] + argv[argv.index("--games") + 2:]
    two[two.index("--out") + 1] = str(tmp_path / "o3")
    assert cli_main(two) == 2 and "more than one board size" in capsys.readouterr().err
    (other / "results.jsonl").write_text('{"game": 0}\n')
    one = argv[:argv.index("--games") + 1] + [str(other)] + argv[argv.index("--games") + 2:]
    one[one.index("--out") + 1] = str(tmp_path / "o4")
    assert cli_main(one) == 2 and "game row 1: not a game result" in capsys.readouterr().err
    no_teacher = [a for a in argv if a not in ("--nodes", "1000")]
    assert cli_main(no_teacher) == 2 and "--nodes N or --tc" in capsys.readouterr().err


def test_a_teacher_move_on_a_stone_is_left_out() -> None:
    g = SourceGame("k", 10, 10, list(WIN), 2, "ours", "opp")
    ann = {"plies": [2, 4], "moves": [[0, 0], [5, 5]], "evals": ["+M3", None]}
    pos = game_positions(g, ann, 0.5, 100.0, 0)
    assert pos is not None and len(pos) == 1            # (0, 0) holds a stone at ply 2
    b = Board(10, 10)
    assert pos.move[0] == b.index(5, 5)
    assert pos.z[0] == pytest.approx(1.0)               # no evaluation: the result alone (Black won)
    # a mate against the mover is -1, mixed half and half with Black's win
    lost = game_positions(g, {"plies": [2], "moves": [[1, 0]], "evals": ["-M4"]}, 0.5, 100.0, 0)
    assert lost is not None and lost.z[0] == pytest.approx(0.0) and lost.zw[0] == 1.0


def test_a_teacher_killed_by_an_interrupt_is_not_restarted() -> None:
    """The one retry after an engine failure is for a teacher that crashed by itself; once the run is
    stopped (SIGTERM, Ctrl-C) the main thread's kill must not be answered by starting a new teacher."""
    import threading
    from protocol.manager import EngineCrashed
    from tools.train.annotate import _annotate_game

    class Flaky:
        asked = 0

        def ask(self, width, height, moves):
            self.asked += 1
            if self.asked == 1:
                raise EngineCrashed("exited with code -9 while waiting for BOARD", "teacher")
            return (5, 5), None

    g = SourceGame("k", 10, 10, list(WIN), 2, "ours", "opp")
    t = Flaky()
    assert _annotate_game(t, g, [2], threading.Event())["moves"] == [[5, 5]] and t.asked == 2  # retried
    stop = threading.Event()
    stop.set()
    with pytest.raises(EngineCrashed):
        _annotate_game(Flaky(), g, [2], stop)


def test_a_teacher_that_crashes_once_is_restarted_and_one_that_always_fails_is_reported(setup, tmp_path: Path,
                                                                                      capsys) -> None:
    argv, src, out = setup
    fake = argv[argv.index("--engine") + 1].split()[1]
    once = list(argv)
    once[once.index("--engine") + 1] = f"{sys.executable} {fake} crash {tmp_path / 'crashed'}"
    assert cli_main(once) == 0                     # the first answer crashes it; the retry's fresh process works
    assert (tmp_path / "crashed").exists() and len(load_shard(out / "annotated.npz")) == 6
    never = list(argv)
    never[never.index("--engine") + 1] = f"{sys.executable} {fake} garbage"
    never[never.index("--out") + 1] = str(tmp_path / "o5")
    capsys.readouterr()
    assert cli_main(never) == 1
    err = capsys.readouterr().err
    assert err.count("not annotated (a rerun retries it)") == 2
    assert not (tmp_path / "o5" / "annotated.npz").exists()
    assert read_annotations(tmp_path / "o5" / "annotations.jsonl") == {}


def _processes_running(needle: str) -> list:
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if needle in (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to find the teacher processes")
def test_sigterm_stops_the_run_keeps_finished_games_and_leaves_no_teacher(setup, tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import time
    argv, src, out = setup
    fake = argv[argv.index("--engine") + 1].split()[1]
    slow = list(argv)
    slow[slow.index("--engine") + 1] = f"{sys.executable} {fake} late"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["FAKE_DELAY_MS"] = "400"
    root = Path(__file__).resolve().parents[1]
    p = subprocess.Popen([sys.executable, "-m", "tools.cli", *slow], cwd=root, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ann = out / "annotations.jsonl"
    deadline = time.monotonic() + 30
    while not (ann.exists() and ann.read_text().count("\n") >= 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ann.exists(), p.communicate(timeout=10)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130 and "rerun the same command to resume" in err, (p.returncode, err)
    assert len(read_annotations(ann)) == 1                     # the first game; the second was cut off
    deadline = time.monotonic() + 10          # the killed teachers are reaped by the OS, not at once
    while _processes_running(f"{fake} late") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_running(f"{fake} late") == []
    assert cli_main(argv) == 0 and len(read_annotations(ann)) == 2


def test_max_eval_leaves_out_decided_positions_and_a_rerun_only_repacks(setup, capsys) -> None:
    argv, src, out = setup
    assert cli_main(argv) == 0
    before = (out / "annotations.jsonl").read_text()
    # the fake's evaluation is 10 * stones - 50: |eval| <= 15 keeps plies 4 and 6 (-10, 10) and 5 (0)
    assert cli_main(argv + ["--max-eval", "15"]) == 0
    assert (out / "annotations.jsonl").read_text() == before        # no engine asked again
    pos = load_shard(out / "annotated.npz")
    assert sorted(((pos.cells == 1) | (pos.cells == 2)).sum(axis=(1, 2)).tolist()) == [4, 5, 6]
    g = SourceGame("k", 10, 10, list(WIN), 2, "ours", "opp")
    mate = {"plies": [2, 4], "moves": [[5, 5], [6, 6]], "evals": ["+M3", "20"]}
    kept = game_positions(g, mate, 0.5, 100.0, 0, max_eval=1000.0)
    assert kept is not None and len(kept) == 1 and kept.move[0] == 66     # the mate is left out
    capsys.readouterr()
    assert cli_main(argv + ["--max-eval", "0"]) == 2 and "--max-eval" in capsys.readouterr().err
