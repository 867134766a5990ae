"""Self-play: valid shards and SGF, determinism (also across worker processes), resume, noise,
resignation and its false-resign measurement, network versions and workers in the records, a
caller's pool kept across calls, lost batches; and the AlphaZero loop end to end (with resume, and
on a worker pool that gets each promoted network).

Everything runs on 7x7 boards, four in a row, with a random 2x8 network and a handful of visits.
"""
from __future__ import annotations

import filecmp
import json
import os
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
                                         SelfPlayWorker, read_jsonl, run_selfplay,
                                         selfplay_spec)
from gomoku_ai.workers import ModelRef, WorkerSpec, make_pool

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


def sgf_without_worker(path: Path) -> str:
    """An SGF collection's text without the ``PC[...]`` (worker) properties: the only part of a
    batch's files that depends on where it was played."""
    text = path.read_text(encoding="utf-8")
    assert text.count("PC[") == text.count("(;"), "every game names its worker"
    return re.sub(r"PC\[[^\]]*\]", "", text)


def assert_same_batches(a: Path, b: Path, names) -> None:
    """Shards equal array for array, SGF equal apart from the worker names."""
    for name in names:
        x, y = load_shard(a / f"{name}.npz"), load_shard(b / f"{name}.npz")
        for f in ("cells", "stm", "last", "move", "pi", "z", "zw", "game"):
            assert np.array_equal(getattr(x, f), getattr(y, f)), (name, f)
        assert sgf_without_worker(a / "sgf" / f"{name}.sgf") == \
            sgf_without_worker(b / "sgf" / f"{name}.sgf"), name


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
    # workers=0: every batch was played in this process, and the log says so
    assert all(ln["pid"] == os.getpid() and isinstance(ln["torch_loaded"], bool) for ln in lines)


def test_deterministic_across_workers_and_resumes(played, tiny_model, tmp_path) -> None:
    out, _ = played
    other = tmp_path / "j2"
    stats = run_selfplay(tiny_model, other, games=4, workers=2, seed=3, **SP)
    assert stats["played_batches"] == 2
    lines = read_jsonl(other / "selfplay.jsonl")
    assert all(ln["torch_loaded"] is False for ln in lines), "self-play workers imported torch"
    assert {ln["worker"].split("-")[0] for ln in lines} == {"local"}
    assert_same_batches(out, other, ("sp-00000", "sp-00001"))
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


def test_records_name_the_network_version_and_the_worker(played, tiny_model) -> None:
    out, stats = played
    version = ModelRef.from_path(tiny_model).version
    assert version.startswith("tiny@") and stats["model_versions"] == [version]
    for ln in read_jsonl(out / "selfplay.jsonl"):
        assert ln["model_version"] == version and ln["worker"] == "in-process"
        assert ln["attempts"] == 1 and ln["model"] == str(tiny_model)
    for _, recs in _games_of(out):
        for rec in recs:
            assert f"model_version={version}" in rec.metadata["sgf"]["GC"][0]
            assert rec.metadata["sgf"]["PC"] == ["in-process"]
            assert rec.black == rec.white == "tiny"


def test_a_callers_pool_outlives_the_call_and_gets_new_versions(played, tiny_model,
                                                                tmp_path) -> None:
    """The loop's use: one pool, several calls; a new network reaches the same workers as a new
    version in the tasks, and the output equals the in-process run's."""
    out, _ = played
    other = tmp_path / "other"
    w = fold_batchnorm(random_model(seed=12, **TINY))
    export_model(w, {"name": "tiny2", "board_sizes": [[7, 7]]}, other)
    with make_pool(selfplay_spec(), 2) as pool:
        a = run_selfplay(tiny_model, tmp_path / "a", games=4, seed=3, pool=pool, **SP)
        pids = set(pool.worker_pids().values())
        b = run_selfplay(other, tmp_path / "a", games=4, seed=3, prefix="v2", pool=pool, **SP)
        assert set(pool.worker_pids().values()) == pids          # the same workers
        assert len(list(pool.run([]))) == 0                      # still open
    assert a["where"]["backend"] == "local" and a["played_batches"] == 2
    assert b["model_versions"] == [ModelRef.from_path(other).version] != a["model_versions"]
    lines = read_jsonl(tmp_path / "a" / "selfplay.jsonl")
    assert {ln["pid"] for ln in lines} <= pids
    assert_same_batches(out, tmp_path / "a", ("sp-00000", "sp-00001"))


class DiesOnBatch2(SelfPlayWorker):
    """A self-play worker whose process dies (as a killed one would) the first time it is given
    batch 2; the marker file says it happened."""

    def __init__(self, marker: str, **kw) -> None:
        super().__init__(**kw)
        self.marker = marker

    def run(self, payload):
        if payload.get("batch") == 2 and not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(9)
        return super().run(payload)


def test_a_lost_batch_is_not_played_and_a_rerun_plays_it(tiny_model, tmp_path) -> None:
    """A worker killed with every attempt lost (max_attempts=1): no shard, a ``lost`` line, the
    other batches go on; the rerun plays exactly that batch, and the result equals a clean run."""
    ref = tmp_path / "ref"
    run_selfplay(tiny_model, ref, games=8, workers=0, seed=5, **SP)
    out = tmp_path / "out"
    marker = tmp_path / "died"
    spec = WorkerSpec(f"{__name__}:DiesOnBatch2", {"marker": str(marker)}, threads=1)
    with make_pool(spec, 2, max_attempts=1) as pool:
        first = run_selfplay(tiny_model, out, games=8, seed=5, pool=pool, **SP)
    assert marker.exists() and first["lost_batches"] == [2] and first["played_batches"] == 3
    lost = first["lost_batches"][0]
    assert not (out / f"sp-{lost:05d}.npz").exists()
    lines = read_jsonl(out / "selfplay.jsonl")
    bad = [ln for ln in lines if ln.get("lost")]
    assert [ln["batch"] for ln in bad] == [lost] and "games" not in bad[0]
    assert bad[0]["error"].startswith("worker local-") and "not played" in bad[0]["note"]
    assert first["games"] == 6                           # the lost games are not counted
    again = run_selfplay(tiny_model, out, games=8, workers=0, seed=5, **SP)
    assert again["played_batches"] == 1 and again["lost_batches"] == [] and again["games"] == 8
    ok = [ln["batch"] for ln in read_jsonl(out / "selfplay.jsonl") if not ln.get("lost")]
    assert sorted(ok) == [0, 1, 2, 3]                    # every batch exactly once
    assert_same_batches(ref, out, [f"sp-{b:05d}" for b in range(4)])


def test_a_batch_that_fails_in_its_worker_stops_the_run(tiny_model, tmp_path) -> None:
    """A model whose files do not match their checksums loads in the worker, not the driver: the
    worker's error stops the run with SelfPlayError (naming the batch), and nothing is written."""
    import shutil
    from gomoku_ai.training.selfplay import SelfPlayError
    bad = tmp_path / "bad"
    for suf in (".json", ".npz", ".onnx"):
        shutil.copyfile(tiny_model.with_suffix(suf), bad.with_suffix(suf))
    for suf in (".npz", ".onnx"):
        data = bytearray(bad.with_suffix(suf).read_bytes())
        data[-1] ^= 0xFF
        bad.with_suffix(suf).write_bytes(bytes(data))
    with pytest.raises(SelfPlayError, match=r"batch sp-0000\d failed on local-"):
        run_selfplay(bad, tmp_path / "out", games=2, workers=1, seed=1, **SP)
    assert not list((tmp_path / "out").glob("*.npz"))


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
    from gomoku_ai.training.openings import openings_to_flat
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


def test_loop_on_a_worker_pool_gets_each_promoted_network(tmp_path) -> None:
    """workers=2: one pool for the whole run; every iteration's self-play is played by the same
    worker processes with the network promoted by the one before (gating off: always promoted)."""
    pytest.importorskip("torch", reason="the loop trains with torch")
    from gomoku_ai.training.loop import Loop
    notes = []
    loop = Loop(tmp_path / "az", dict(LOOP_CFG, workers=2, gate_games=0), log=notes.append)
    state = loop.run(2)
    assert state["completed"] == 2 and loop._pool is None          # closed at the end
    lines = read_jsonl(tmp_path / "az" / "data" / "selfplay.jsonl")
    by_it = {}
    for ln in lines:
        by_it.setdefault(ln["prefix"], []).append(ln)
    v1 = {ln["model_version"] for ln in by_it["it0001"]}
    v2 = {ln["model_version"] for ln in by_it["it0002"]}
    assert len(v1) == len(v2) == 1 and v1 != v2
    assert v2 == {ModelRef.from_path(tmp_path / "az" / "candidates" / "it0001").version}
    assert {ln["worker"] for ln in lines} <= {"local-0", "local-1"}  # never restarted
    assert len({ln["pid"] for ln in lines}) == 2
    assert any("workers:" in r.get("note", "") for r in notes)
    cfg = json.loads((tmp_path / "az" / "config.json").read_text())
    assert cfg["backend"] == "local" and cfg["address"] is None


def test_old_loop_config_without_backend_still_loads(tmp_path) -> None:
    from gomoku_ai.training.loop import LoopConfig
    old = {k: v for k, v in LOOP_CFG.items() if k not in ("backend", "address")}
    cfg = LoopConfig.from_dict(old)
    assert cfg.backend == "local" and cfg.address is None
    with pytest.raises(ValueError, match="unknown backend"):
        LoopConfig.from_dict(dict(old, backend="slurm"))


def test_policy_accuracy_scores_the_held_out_games_move_by_move(tiny_model: Path, tmp_path: Path) -> None:
    """``gomoku train accuracy``: the trainer's split by game, occupied squares masked, top-1/top-3,
    the log-likelihood and the value's weighted squared error equal to a position-by-position
    computation with the network."""
    from gomoku_ai.net import encode, load_model
    from gomoku_ai.training.accuracy import policy_accuracy
    from gomoku_ai.training.dataset import positions_from_games, save_shard, split_by_game
    rng = np.random.default_rng(5)
    games = []
    for g in range(40):
        moves = [int(m) for m in rng.permutation(49)[:int(rng.integers(6, 14))]]
        games.append((moves, (7, 7), None if g % 3 == 0 else g % 2))    # a third without a result
    pos = positions_from_games(games)
    shard = tmp_path / "g.npz"
    save_shard(pos, shard)
    got = policy_accuracy(tiny_model, shard, val_fraction=0.25, seed=3)
    train, val = split_by_game(pos, 0.25, 3)
    assert not set(pos.game[train]) & set(pos.game[val]) and len(set(pos.game[val])) == 10
    net = load_model(tiny_model)
    top1 = top3 = 0
    ll = sq = w = 0.0
    for i in val:
        b = Board(7, 7, n=5)
        cells = pos.cells[i].reshape(-1)
        # rebuild the position: the stones, then the side to move from the counts
        blacks = [m for m in range(49) if cells[m] == BLACK]
        whites = [m for m in range(49) if cells[m] == WHITE]
        for k in range(max(len(blacks), len(whites))):
            if k < len(blacks):
                b.push(blacks[k])
            if k < len(whites):
                b.push(whites[k])
        assert b.side_to_move == int(pos.stm[i])
        last = int(pos.last[i])
        x = encode(b)
        if last >= 0:   # the last-move plane comes from the record, not from the replay order
            x[-1] = 0.0
            x[-1].reshape(-1)[last] = 1.0
        logits_batch, value = net.forward(x[None])
        logits = logits_batch[0].astype(np.float64)
        sq += float(pos.zw[i]) * (float(value[0]) - float(pos.z[i])) ** 2
        w += float(pos.zw[i])
        logits[cells != 0] = -np.inf
        order = list(np.argsort(-logits)[:3])
        top1 += order[0] == pos.move[i]
        top3 += pos.move[i] in order
        ll += logits[pos.move[i]] - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
    n = len(val)
    assert got["positions"] == n and got["games"] == 10
    assert got["top1"] == round(top1 / n, 4) and got["top3"] == round(top3 / n, 4)
    assert got["policy_loss"] == pytest.approx(-ll / n, abs=1e-3)
    assert 0 < w < n and got["value_mse"] == pytest.approx(sq / w, abs=1e-4)    # results only where known


def test_loop_plays_lost_selfplay_batches_again_before_training(tmp_path, monkeypatch) -> None:
    """A batch lost with its workers is played again in the same phase; lost every time, the loop
    stops with LoopError (a rerun resumes) instead of training on fewer games."""
    from gomoku_ai.training import loop as loop_mod
    from gomoku_ai.training import selfplay as sp_mod
    real = sp_mod.run_selfplay
    calls = []

    def flaky(*a, **k):
        out = real(*a, **k)
        calls.append(out["played_batches"])
        if len(calls) == 1:            # pretend batch 0 was lost the first time
            out = dict(out, lost_batches=[0])
        return out

    monkeypatch.setattr(sp_mod, "run_selfplay", flaky)
    st = loop_mod.run_loop(tmp_path / "az", 1, dict(LOOP_CFG, gate_games=0))
    assert st["completed"] == 1 and len(calls) == 2 and calls[1] == 0   # second pass: nothing left

    monkeypatch.setattr(sp_mod, "run_selfplay",
                        lambda *a, **k: dict(real(*a, **k), lost_batches=[1]))
    with pytest.raises(loop_mod.LoopError, match="lost with their workers 3 times"):
        loop_mod.run_loop(tmp_path / "az", 2)
