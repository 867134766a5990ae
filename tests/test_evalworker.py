"""The network in a second process (gomoku_ai.net.evalworker): the wire protocol, the search with it,
the player's use of it under INFO thread_num / max_memory, and what happens when the worker fails."""
from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from gomoku_ai.board import Board
from gomoku_ai.evaluator import NetworkEvaluator, OffloadError
from gomoku_ai.mcts import MCTS, MCTSConfig, eval_cache_bytes
from gomoku_ai.net.evalworker import WORKER_BYTES, EvalWorker, WorkerState
from gomoku_ai.player import BASELINE_BYTES, Limit, Player
from gomoku_ai.shipped import load_evaluator, load_player

ROOT = Path(__file__).resolve().parents[1]
OPENING = "h8 i9 g9 h10 g7 i8"


def ready(w: EvalWorker, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if w.poll():
            return True
        if w.failed:
            return False
        time.sleep(0.01)
    return False


def gone(pid: int, timeout: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (reaped, or a zombie of a parent that is not us)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


def position() -> Board:
    b = Board(15)
    for tok in OPENING.split():
        b.play(b.parse(tok))
    return b


@pytest.fixture(scope="module")
def evaluator() -> NetworkEvaluator:
    ev = load_evaluator()
    assert isinstance(ev, NetworkEvaluator)
    return ev


def test_worker_answers_exactly_as_the_network_in_this_process(evaluator) -> None:
    net = evaluator.network
    w = EvalWorker(net).start()
    try:
        assert ready(w), w.reason
        assert w.state is WorkerState.READY and w.alive
        rng = np.random.default_rng(3)
        for n, size in ((1, 15), (12, 15), (5, 20)):
            x = (rng.random((n, 5, size, size)) < 0.15).astype(np.float32)
            x[:, 2] = 1.0
            logits, values, el = w.submit(list(x), (size, size)).result()
            want_l, want_v = net.forward(x)
            assert logits.shape == (n, size * size) and values.shape == (n,)
            np.testing.assert_allclose(logits, want_l.reshape(n, -1), atol=1e-5)
            np.testing.assert_allclose(values, want_v.reshape(n), atol=1e-5)
            assert el > 0.0
        with pytest.raises(ValueError):
            w.submit(list(x), (15, 15))      # the planes are 20x20
        pid = w.pid
    finally:
        w.close()
    assert w.state is WorkerState.CLOSED and gone(pid)


def test_one_batch_in_flight_at_a_time(evaluator) -> None:
    w = EvalWorker(evaluator.network).start()
    try:
        assert ready(w), w.reason
        x = np.zeros((2, 5, 15, 15), np.float32)
        pending = w.submit(list(x), (15, 15))
        with pytest.raises(OffloadError, match="in flight"):
            w.submit(list(x), (15, 15))
        assert pending.result()[0].shape == (2, 225)
    finally:
        w.close()


def test_the_search_gives_the_same_tree_in_a_worker_as_in_a_thread(evaluator) -> None:
    """The worker only moves the evaluation: at fixed visits, the same batches give the same tree as the
    threaded pipeline with the same batch size."""
    ev = NetworkEvaluator(evaluator.network, batch_size=12)
    threaded = MCTS(ev, MCTSConfig(pipeline=True), seed=1)
    try:
        threaded.search(position(), visits=600)
    finally:
        threaded.close()
    w = EvalWorker(evaluator.network).start()
    try:
        assert ready(w), w.reason
        offloaded = MCTS(evaluator, MCTSConfig(offload_batch=12), seed=1)
        offloaded.offload = w
        st = offloaded.search(position(), visits=600)
        assert offloaded.offload is w and w.batches > 10
    finally:
        w.close()
    assert st.evaluations > 0
    np.testing.assert_array_equal(offloaded.root.moves, threaded.root.moves)
    np.testing.assert_array_equal(offloaded.root.N, threaded.root.N)
    assert offloaded.best_move() == threaded.best_move()


def test_a_worker_killed_mid_game_leaves_the_search_in_this_process(evaluator) -> None:
    p = Player(evaluator)
    p.use_vcf = p.use_vct = False
    p.thread_num = 2
    w = p.worker
    assert w is not None and ready(w), getattr(w, "reason", "")
    b = position()
    info = p.think(b, Limit(soft_ms=300, hard_ms=600))
    assert p.mcts.offload is w and w.batches > 0 and info.visits > 0
    os.kill(w.pid, signal.SIGKILL)
    assert gone(w.pid)
    p.new_game()                     # a fresh tree: the search must evaluate again
    info = p.think(b, Limit(soft_ms=300, hard_ms=600))
    assert b.is_empty(info.move) and info.visits >= 10     # it evaluated (a loaded machine gets fewer)
    assert w.failed and "died" in w.reason and p.mcts.offload is None
    # never restarted: the next search stays in this process
    p.thread_num = 2
    assert p.worker is w
    info = p.think(b, Limit(soft_ms=100, hard_ms=300))
    assert b.is_empty(info.move) and p.mcts.offload is None
    p.close()


def test_thread_num_starts_and_stops_the_worker(evaluator) -> None:
    p = Player(evaluator)
    assert p.worker is None
    p.thread_num = 2
    w = p.worker
    assert w is not None and ready(w), getattr(w, "reason", "")
    pid = w.pid
    p.thread_num = 2                 # configured again before every search: the same worker
    assert p.worker is w
    p.thread_num = 1
    assert p.worker is None and gone(pid)
    p.thread_num = 3                 # a new one
    assert p.worker is not None and p.worker is not w
    p.close()
    assert p.worker is None


def test_max_memory_too_small_for_two_processes_keeps_one(evaluator) -> None:
    p = Player(evaluator)
    p.memory_limit_bytes = 350 * 2**20          # Gomocup's limit, counted over the children too
    p.thread_num = 2
    assert p.worker is None and "max_memory 350 MB" in (p.worker_refusal() or "")
    info = p.think(position(), Limit(soft_ms=100, hard_ms=300))
    assert info.visits > 0 and p.mcts.offload is None
    p.memory_limit_bytes = 0                    # no limit
    p.thread_num = 2
    assert p.worker is not None and ready(p.worker)
    # the tree's cap leaves the worker's share of a limit that allows it
    p.memory_limit_bytes = BASELINE_BYTES + WORKER_BYTES + 100 * 2**20
    p.think(position(), Limit(soft_ms=50, hard_ms=200))
    # (and the evaluation cache's, which keeps its configured size here)
    assert p.mcts.cfg.eval_cache == MCTSConfig().eval_cache
    cache = eval_cache_bytes(p.mcts.cfg.eval_cache, position().size)
    assert p.mcts.cfg.max_nodes == (100 * 2**20 - cache) // 4000
    p.memory_limit_bytes = 350 * 2**20          # lowered later: the worker is stopped
    p.think(position(), Limit(soft_ms=50, hard_ms=200))
    assert p.worker is None and p.mcts.offload is None
    p.close()


def test_pygomoku_worker_0_keeps_one_core(evaluator, monkeypatch) -> None:
    monkeypatch.setenv("PYGOMOKU_WORKER", "0")
    p = Player(evaluator)
    p.thread_num = 2
    assert p.worker is None and p.worker_refusal() == "PYGOMOKU_WORKER=0"


def test_a_worker_without_hello_fails_after_its_timeout(evaluator) -> None:
    w = EvalWorker(evaluator.network, start_timeout_s=0.5,
                   command=[sys.executable, "-c", "import time; time.sleep(30)"]).start()
    assert not w.poll() and w.state is WorkerState.STARTING
    time.sleep(0.6)
    assert not w.poll() and w.failed and "no hello" in w.reason
    assert gone(w.pid)


def test_a_worker_that_exits_at_once_fails(evaluator) -> None:
    w = EvalWorker(evaluator.network, command=[sys.executable, "-c", "raise SystemExit(4)"]).start()
    assert not ready(w, 10.0)
    assert w.failed and "status 4" in w.reason


def test_a_worker_with_wrong_answers_is_refused_by_the_probe(evaluator, tmp_path) -> None:
    """A child that speaks the protocol, names the right network, and answers zeros."""
    fake = tmp_path / "fake_worker.py"
    fake.write_text(textwrap.dedent(f"""
        import json, struct, sys
        name, backend = {evaluator.network.name!r}, {str(evaluator.network.backend)!r}
        out, inp = sys.stdout.buffer, sys.stdin.buffer
        hello = json.dumps({{"name": name, "backend": backend, "pid": 0}}).encode()
        out.write(b"GEVH" + struct.pack("<I", len(hello)) + hello); out.flush()
        while True:
            head = inp.read(20)
            if len(head) < 20:
                break
            _m, n, p, h, w = struct.unpack("<4sIIII", head)
            inp.read(4 * n * p * h * w)
            out.write(struct.pack("<4sIId", b"GEVR", n, h * w, 0.001) + bytes(4 * n * (h * w + 1)))
            out.flush()
    """))
    w = EvalWorker(evaluator.network, command=[sys.executable, str(fake)]).start()
    assert not ready(w, 10.0)
    assert w.failed and "differ" in w.reason


def test_a_worker_of_another_network_is_refused(evaluator) -> None:
    other = load_evaluator("freestyle15-4x32")
    w = EvalWorker(evaluator.network, command=[
        sys.executable, "-m", "gomoku_ai.net.evalworker", "--model", str(other.network.basename),
        "--backend", str(evaluator.network.backend)]).start()
    assert not ready(w, 20.0)
    assert w.failed and "freestyle15-4x32" in w.reason


def test_the_frozen_entry_point_serves_too(evaluator) -> None:
    """``engine.py --eval-worker ...`` is what a frozen engine runs (no ``-m`` there)."""
    net = evaluator.network
    w = EvalWorker(net, command=[sys.executable, str(ROOT / "engine.py"), "--eval-worker", "--model",
                                 str(net.basename), "--backend", str(net.backend)]).start()
    try:
        assert ready(w), w.reason
    finally:
        w.close()


def test_the_player_plays_the_same_game_with_and_without_the_worker_at_fixed_visits() -> None:
    """At a visit limit the player's choices do not depend on where the network runs, when the batches
    are the same: one player with a worker, one with a thread pipeline of batch 12."""
    a = load_player()
    a.thread_num = 2
    assert a.worker is not None and ready(a.worker)
    b = load_player()
    b.evaluator = NetworkEvaluator(b.evaluator.network, batch_size=12)
    b.mcts = MCTS(b.evaluator, MCTSConfig(pipeline=True), seed=0)
    board = position()
    try:
        for _ in range(4):
            ma = a.think(board, Limit(visits=300)).move
            mb = b.think(board, Limit(visits=300)).move
            assert ma == mb and a.mcts.offload is a.worker
            board.play(ma)
    finally:
        a.close()
        b.close()


def children(pid: int) -> list:
    """The live child processes of ``pid`` (from /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(d.name))
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_brain_uses_a_worker_under_thread_num_2_and_leaves_none_after_end(engine) -> None:
    e = engine()
    e.send("START 15")
    assert e.reply(30) == "OK"
    # max_memory 0 means Gomocup's 350 MB (as in Rapfi): too little for two processes; 1 GB is enough
    e.send("INFO thread_num 2", "INFO max_memory 1000000000", "INFO timeout_turn 300")
    e.sync()
    kids = children(e.proc.pid)         # started by the INFO lines, before any search
    assert len(kids) == 1
    e.send("BEGIN")
    e.move(10)
    e.send("TURN 0,0")
    e.move(10)
    assert children(e.proc.pid) == kids
    e.send("END")
    assert e.wait_exit(5) == 0
    assert gone(kids[0])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_brain_keeps_one_process_under_gomocups_memory_limit(engine) -> None:
    e = engine()
    e.send("START 15")
    assert e.reply(30) == "OK"
    e.send("INFO thread_num 2", "INFO max_memory 367001600", "INFO timeout_turn 200", "BEGIN")
    e.move(10)
    e.send("TURN 0,0")
    e.move(10)
    assert not children(e.proc.pid)
