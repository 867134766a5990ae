"""Self-play: valid shards and SGF, determinism (also across worker processes), resume, noise,
resignation and its false-resign measurement; and the AlphaZero loop end to end (with resume).

Everything runs on 7x7 boards, four in a row, with a random 2x8 network and a handful of visits.
"""
from __future__ import annotations

import filecmp
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.board import Board
from gomoku_ai.evaluator import UniformEvaluator
from gomoku_ai.mcts import MCTSConfig
from gomoku_ai.net import export_model, fold_batchnorm, random_model
from gomoku_ai.records import read_sgf_games
from gomoku_ai.rules import BLACK, WHITE, Termination
from gomoku_ai.training.dataset import load_shard
from gomoku_ai.training.selfplay import (ResignTracker, SelfPlayMCTS, is_false_resignation,
                                         read_jsonl, run_selfplay)

TINY = dict(blocks=2, channels=8, head_channels=8, value_fc=16)
SP = dict(board_size=7, n=4, visits_full=16, visits_fast=4, p_full=0.5, games_per_shard=2)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("model")
    w = fold_batchnorm(random_model(seed=11, **TINY))
    export_model(w, {"name": "tiny", "board_sizes": [[7, 7]]}, d / "tiny")
    return d / "tiny"


@pytest.fixture(scope="module")
def played(tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("sp")
    stats = run_selfplay(tiny_model, out, games=4, workers=0, seed=3, **SP)
    return out, stats


def _games_of(out: Path):
    """(shard, records) per batch, in batch order."""
    res = []
    for shard in sorted(out.glob("sp-*.npz")):
        recs = read_sgf_games(out / "sgf" / (shard.stem + ".sgf"))
        res.append((load_shard(shard), recs))
    return res


def test_shards_are_valid_policy_and_value_targets(played) -> None:
    out, stats = played
    assert stats["games"] == 4 and stats["batches"] == 2
    total = 0
    for pos, recs in _games_of(out):
        assert len(recs) == 2
        total += len(pos)
        assert pos.pi is not None and (pos.move == -1).all() and (pos.zw == 1).all()
        flat_cells = pos.cells.reshape(len(pos), -1)
        pi = pos.pi.astype(np.float32)
        assert np.allclose(pi.sum(axis=1), 1.0, atol=1e-2)
        assert (pi[flat_cells != 0] == 0).all(), "policy mass on an occupied square"
        assert set(np.unique(pos.z)) <= {-1.0, 0.0, 1.0}
        for i in range(len(pos)):
            rec = recs[int(pos.game[i])]
            winner = rec.result.winner
            want = 0.0 if winner is None else (1.0 if winner == pos.stm[i] else -1.0)
            assert pos.z[i] == want
            # the position occurs in the game: replaying the record to the same stone count
            b = Board(7, 7, n=4)
            k = int((pos.cells[i] != 0).sum())
            for x, y in rec.moves[:k]:
                b.push(b.index(x, y))
            assert np.array_equal(b.cells, pos.cells[i]) and b.side_to_move == pos.stm[i]
    assert total == stats["positions"] == stats["full_moves"]   # only full searches are targets


def test_sgf_records_are_readable_and_consistent(played) -> None:
    out, _ = played
    for _, recs in _games_of(out):
        for rec in recs:
            assert rec.width == 7 and rec.result is not None
            gc = rec.metadata["sgf"]["GC"][0]
            opening = int(re.search(r"opening=(\d+)", gc).group(1))
            comments = rec.metadata["move_comments"]
            assert all(comments[k] == "opening" for k in range(opening))
            kinds = [comments[k].split()[0] for k in range(opening, len(rec.moves))]
            assert set(kinds) <= {"full", "fast"}
            b = rec.to_board(n=4)
            if rec.result.termination is Termination.FIVE:
                assert b.winner == rec.result.winner
            elif rec.result.termination is Termination.RESIGNATION:
                assert b.winner is None and rec.result.winner in (BLACK, WHITE)
    lines = read_jsonl(out / "selfplay.jsonl")
    assert [ln["batch"] for ln in lines] == [0, 1]
    assert all(ln["torch_loaded"] is False or ln["pid"] for ln in lines)


def test_deterministic_across_workers_and_resumes(played, tiny_model, tmp_path) -> None:
    out, _ = played
    other = tmp_path / "j2"
    stats = run_selfplay(tiny_model, other, games=4, workers=2, seed=3, **SP)
    assert stats["played_batches"] == 2
    lines = read_jsonl(other / "selfplay.jsonl")
    assert all(ln["torch_loaded"] is False for ln in lines), "self-play workers imported torch"
    for name in ("sp-00000", "sp-00001"):
        a, b = load_shard(out / f"{name}.npz"), load_shard(other / f"{name}.npz")
        for f in ("cells", "stm", "last", "move", "pi", "z", "zw", "game"):
            assert np.array_equal(getattr(a, f), getattr(b, f)), f
        assert filecmp.cmp(out / "sgf" / f"{name}.sgf", other / "sgf" / f"{name}.sgf",
                           shallow=False)
    # resume: nothing is played again
    mtimes = {p.name: p.stat().st_mtime_ns for p in other.glob("*.npz")}
    again = run_selfplay(tiny_model, other, games=4, workers=0, seed=3, **SP)
    assert again["played_batches"] == 0 and again["games"] == 4
    assert mtimes == {p.name: p.stat().st_mtime_ns for p in other.glob("*.npz")}
    # another seed gives other games
    third = run_selfplay(tiny_model, tmp_path / "s4", games=2, workers=0, seed=4, **SP)
    assert third["games"] == 2
    assert not filecmp.cmp(out / "sgf" / "sp-00000.sgf", tmp_path / "s4" / "sgf" / "sp-00000.sgf",
                           shallow=False)


def test_root_noise_on_fresh_and_reused_roots() -> None:
    b = Board(7, 7, n=4)
    b.push(24)
    m = SelfPlayMCTS(UniformEvaluator(), MCTSConfig(), seed=1, noise_total=10.0,
                     noise_fraction=0.25)
    m.noise = True
    m.search(b, visits=20)
    root = m.root
    k = len(root.moves)
    assert not np.allclose(root.P, 1.0 / k) and abs(root.P.sum() - 1) < 1e-9
    # reuse: play the most visited move and its reply; the reused root gets noise too
    mv = m.best_move()
    b.push(mv)
    child = root.children[int(np.flatnonzero(root.moves == mv)[0])]
    before = None if child is None or not child.expanded else child.P.copy()
    n0 = m.noised_roots
    m.search(b, visits=20)
    assert m.noised_roots == n0 + 1
    if before is not None:
        assert m.root is child and not np.allclose(m.root.P, before)
    # noise off: priors stay uniform
    q = SelfPlayMCTS(UniformEvaluator(), MCTSConfig(), seed=1)
    q.search(b, visits=20)
    assert np.allclose(q.root.P, 1.0 / len(q.root.moves))


def test_resign_tracker_and_false_resign_rule() -> None:
    t = ResignTracker(threshold=-0.9, plies=2)
    assert t.update(BLACK, -0.95) is None          # one ply is not enough
    assert t.update(WHITE, 0.5) is None            # White does not see Black as lost (-0.5)
    assert t.update(BLACK, -0.95) is None          # White's 0.5 still disagrees
    assert t.update(WHITE, 0.97) is None           # White's own value is high: White is fine
    assert t.update(BLACK, -0.99) == BLACK         # both sides' last plies agree: Black resigns
    assert is_false_resignation(None, BLACK) is None
    assert is_false_resignation(BLACK, WHITE) is False   # it really lost
    assert is_false_resignation(BLACK, BLACK) is True    # it would have won
    assert is_false_resignation(BLACK, None) is True     # a draw is a false resignation too


def test_false_resign_measurement_constructed(tmp_path) -> None:
    # A resignation threshold so loose that the side to move "resigns" at its first chance, with
    # resignation disabled in every game: each game would have resigned, is played out, and the
    # false-resign count must be exactly the games the would-be resigner did not lose.
    kw = dict(SP, resign_threshold=0.999, resign_plies=2)
    stats = run_selfplay(UniformEvaluator(), tmp_path / "off", games=6, workers=0, seed=9,
                         resign_disabled_fraction=1.0, **kw)
    assert stats["resign_disabled"] == 6 and stats["would_resign"] == 6 and stats["resigned"] == 0
    false = 0
    for sgf in sorted((tmp_path / "off" / "sgf").glob("*.sgf")):
        for rec in read_sgf_games(sgf):
            gc = rec.metadata["sgf"]["GC"][0]
            who = BLACK if re.search(r"would_resign=([BW])", gc).group(1) == "B" else WHITE
            assert rec.result.termination is not Termination.RESIGNATION
            false += bool(is_false_resignation(who, rec.result.winner))
            assert f"false_resign={int(is_false_resignation(who, rec.result.winner))}" in gc
    assert stats["false_resigns"] == false
    assert stats["false_resign_rate"] == pytest.approx(false / 6, abs=1e-4)
    # with resignation on, the same games end by resignation, and the z targets follow it
    on = run_selfplay(UniformEvaluator(), tmp_path / "on", games=4, workers=0, seed=9,
                      resign_disabled_fraction=0.0, **kw)
    assert on["resigned"] == 4 and on["would_resign"] == 0 and on["false_resign_rate"] is None
    for shard in sorted((tmp_path / "on").glob("*.npz")):
        pos = load_shard(shard)
        recs = read_sgf_games(tmp_path / "on" / "sgf" / (shard.stem + ".sgf"))
        for rec in recs:
            assert rec.result.termination is Termination.RESIGNATION
        for i in range(len(pos)):
            w = recs[int(pos.game[i])].result.winner
            assert pos.z[i] == (1.0 if w == pos.stm[i] else -1.0)


# ---------------------------------------------------------------------------- the loop
LOOP_CFG = dict(width=7, n=4, arch={"blocks": 2, "channels": 8, "head_channels": 8,
                                     "value_fc": 16},
                games_per_iter=4, workers=0, visits_full=12, visits_fast=4, p_full=0.5,
                selfplay={"games_per_shard": 2}, min_positions=1, steps_per_iter=4,
                batch_size=16, warmup_steps=1, gate_games=6, gate_visits=6, gate_elo1=200,
                threads=1)


def test_loop_iteration_end_to_end_and_resume(tmp_path) -> None:
    pytest.importorskip("torch", reason="the loop trains with torch")
    from gomoku_ai.net import load_model
    from gomoku_ai.training.loop import Loop, run_loop
    run = tmp_path / "az"
    state = run_loop(run, 1, LOOP_CFG)
    assert state["completed"] == 1 and state["current"] is None and state["train_step"] == 4
    for f in ("best.json", "best.npz", "best.onnx", "candidates/it0001.json", "state.json",
              "config.json", "train/checkpoint.pt", "data/selfplay.jsonl"):
        assert (run / f).exists(), f
    load_model(run / "best")
    lines = read_jsonl(run / "loop.jsonl")
    assert len(lines) == 1
    rec = lines[0]
    assert rec["iteration"] == 1 and rec["games"] == 4 and rec["positions"] > 0
    assert rec["train"]["steps"] == 4 and "policy_loss" in rec["train"]
    g = rec["gate"]
    assert g["decision"] in ("accept", "reject", "inconclusive") and g["games"] == 2 * g["pairs"]
    assert sum(g["pentanomial"]) == g["pairs"] and len(g["bounds"]) == 2 and "llr" in g
    assert rec["promoted"] == (g["decision"] == "accept")
    # a rerun to the same target does nothing
    shards = {p.name: p.stat().st_mtime_ns for p in (run / "data").glob("*.npz")}
    ck = (run / "train" / "checkpoint.pt").stat().st_mtime_ns
    run_loop(run, 1)
    assert shards == {p.name: p.stat().st_mtime_ns for p in (run / "data").glob("*.npz")}
    assert ck == (run / "train" / "checkpoint.pt").stat().st_mtime_ns
    assert len(read_jsonl(run / "loop.jsonl")) == 1
    # interrupted after self-play of iteration 2: the rerun trains, gates, logs, and does not
    # play those games again
    st = Loop(run).run(2, stop_after_phase="selfplay")
    assert st["completed"] == 1 and st["current"]["phase"] == "train"
    shards2 = {p.name: p.stat().st_mtime_ns for p in (run / "data").glob("it0002-*.npz")}
    assert len(shards2) == 2
    st = run_loop(run, 2)
    assert st["completed"] == 2 and st["train_step"] == 8
    assert shards2 == {p.name: p.stat().st_mtime_ns for p in (run / "data").glob("it0002-*.npz")}
    assert [r["iteration"] for r in read_jsonl(run / "loop.jsonl")] == [1, 2]
    assert json.loads((run / "config.json").read_text())["width"] == 7


def test_loop_time_budget_starts_no_new_iteration(tmp_path) -> None:
    pytest.importorskip("torch", reason="the loop trains with torch")
    from gomoku_ai.training.loop import Loop
    notes = []
    loop = Loop(tmp_path / "az", dict(LOOP_CFG, gate_games=0), log=notes.append)
    st = loop.run(3, max_seconds=0.0)
    assert st["completed"] == 0 and st["current"] is None
    assert any("time budget" in r.get("note", "") for r in notes)
    assert not (tmp_path / "az" / "data").exists()


def test_file_openings_that_do_not_fit_the_board_are_left_out(tmp_path: Path) -> None:
    from gomoku_ai.training.selfplay import openings_to_flat
    book = tmp_path / "book.txt"
    # the second line reaches 9 columns left of the centre: fits 20x20, not 15x15
    book.write_text("0,0, 1,0, 1,3\n-9,0, 1,1\n0,0, 0,1\n", encoding="utf-8")
    on15 = openings_to_flat(book, 15, 15)
    on20 = openings_to_flat(book, 20, 20)
    assert len(on15) == 2 and len(on20) == 3
    assert on15[0] == (7 * 15 + 7, 7 * 15 + 8, 10 * 15 + 8)
    assert all(0 <= m < 225 for op in on15 for m in op)
    far = tmp_path / "far.txt"
    far.write_text("-4,0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no opening of the file fits the 5x5 board"):
        openings_to_flat(far, 5, 5)
    with pytest.raises(ValueError, match="off the 15x15 board"):
        openings_to_flat([[(15, 0)]], 15, 15)
