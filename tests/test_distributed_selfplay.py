"""Self-play and gating through the Ray backend (a private Ray instance on this machine, loopback
only, started once for the module): the same files as the local backend, array for array and
game for game apart from the worker names; a Ray worker killed mid-batch costs only that attempt;
a gate on Ray actors decides as the sequential gate.

Every test is bounded in time (``ALARM_S``), every batch in wall seconds (``batch_limit_s``).
"""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from gomoku_ai.net import export_model, fold_batchnorm, random_model
from gomoku_ai.training.gating import run_gate
from gomoku_ai.training.poolworker import training_spec
from gomoku_ai.training.selfplay import read_jsonl, run_selfplay
from gomoku_ai.workers import ModelRef, make_pool

from conftest import needs_ray
from test_selfplay import (SP, TINY, assert_same_batches, sgf_without_worker,  # noqa: F401
                           tiny_model)    # the same tiny network fixture

pytestmark = [needs_ray, pytest.mark.usefixtures("time_bound")]

ALARM_S = 240             # per test, Ray start included
LIMIT_S = 120.0           # per batch attempt



@pytest.fixture(scope="module")
def ray_pool():
    """Two training-loop workers (self-play and gate pairs) as Ray actors on a private loopback
    instance (shut down after)."""
    pool = make_pool(training_spec(), 2, backend="ray", max_attempts=2, start_timeout_s=120)
    yield pool
    pool.close()


def test_ray_backend_writes_what_the_local_backend_writes(ray_pool, tiny_model,
                                                          tmp_path) -> None:
    local, ray_out = tmp_path / "local", tmp_path / "ray"
    a = run_selfplay(tiny_model, local, games=6, workers=2, backend="local", seed=7,
                     batch_limit_s=LIMIT_S, **SP)
    b = run_selfplay(tiny_model, ray_out, games=6, seed=7, pool=ray_pool,
                     batch_limit_s=LIMIT_S, **SP)
    assert b["where"]["backend"] == "ray" and b["played_batches"] == 3 == a["played_batches"]
    for k in ("games", "positions", "full_moves", "fast_moves", "simulations", "evaluations",
              "black_wins", "white_wins", "draws", "plies", "model_versions"):
        assert a[k] == b[k], k
    assert b["model_versions"] == [ModelRef.from_path(tiny_model).version]
    names = [f"sp-{i:05d}" for i in range(3)]
    assert_same_batches(local, ray_out, names)
    # the records differ only in the clearly named fields that say where a batch ran
    la = {ln["batch"]: ln for ln in read_jsonl(local / "selfplay.jsonl")}
    lb = {ln["batch"]: ln for ln in read_jsonl(ray_out / "selfplay.jsonl")}
    where = {"worker", "pid", "elapsed_s", "attempts"}
    for i in range(3):
        assert {k: v for k, v in la[i].items() if k not in where} == \
            {k: v for k, v in lb[i].items() if k not in where}
        assert la[i]["worker"].startswith("local-") and lb[i]["worker"].startswith("ray-")
        assert lb[i]["torch_loaded"] is False
    text = (ray_out / "sgf" / "sp-00000.sgf").read_text()
    assert "PC[ray-" in text and sgf_without_worker(ray_out / "sgf" / "sp-00000.sgf") in \
        sgf_without_worker(local / "sgf" / "sp-00000.sgf")


def test_a_ray_worker_killed_mid_batch_loses_only_that_attempt(ray_pool, tiny_model,
                                                               tmp_path) -> None:
    """SIGKILL from outside (this process) to the other actor, busy with its batch, at the
    moment the first batch is recorded: that attempt is lost and the batch retried on a fresh
    actor; every batch is written exactly once and the files equal the undisturbed run's."""
    kw = dict(SP, visits_full=160, visits_fast=40, games_per_shard=3)
    ref, out = tmp_path / "ref", tmp_path / "out"
    run_selfplay(tiny_model, ref, games=12, seed=9, pool=ray_pool, batch_limit_s=LIMIT_S, **kw)
    victims = []

    def log(rec) -> None:
        if not victims and not rec.get("lost"):
            # the actor that did not send this batch is still playing its own: kill it there
            # (were it done already, it dies idle and its next batch is the lost attempt)
            pids = ray_pool.worker_pids()
            busy = [pid for name, pid in pids.items() if name != rec["worker"]]
            victims.append((busy or list(pids.values()))[0])
            os.kill(victims[0], signal.SIGKILL)

    before = ray_pool.lost_attempts
    res = run_selfplay(tiny_model, out, games=12, seed=9, pool=ray_pool, log=log,
                       batch_limit_s=LIMIT_S, **kw)
    assert victims and ray_pool.lost_attempts == before + 1
    assert res["lost_batches"] == [] and res["played_batches"] == 4 and res["games"] == 12
    lines = read_jsonl(out / "selfplay.jsonl")
    assert sorted(ln["batch"] for ln in lines) == [0, 1, 2, 3]      # exactly once each
    assert not any(ln.get("lost") for ln in lines)
    assert sorted(ln["attempts"] for ln in lines) == [1, 1, 1, 2]
    assert all(ln["pid"] != victims[0] for ln in lines if ln["attempts"] == 2)
    assert_same_batches(ref, out, [f"sp-{i:05d}" for i in range(4)])
    assert all(ln["worker"].startswith("ray-") for ln in lines)


def test_gate_on_ray_actors_decides_as_the_sequential_gate(ray_pool, tiny_model,
                                                           tmp_path) -> None:
    other = tmp_path / "other"
    export_model(fold_batchnorm(random_model(seed=12, **TINY)),
                 {"name": "tiny2", "board_sizes": [[7, 7]]}, other)
    for cand, best, kw in (("heuristic", "uniform", dict(max_games=40, elo1=200, visits=16)),
                           (tiny_model, other, dict(max_games=12, visits=8))):
        seq = run_gate(cand, best, width=7, n=4, seed=3, **kw)
        par = run_gate(cand, best, width=7, n=4, seed=3, pool=ray_pool,
                       journal=tmp_path / f"{Path(str(cand)).name}.jsonl", **kw)
        for k in ("decision", "games", "wins", "draws", "losses", "pentanomial", "llr",
                  "candidate_version", "best_version"):
            assert par[k] == seq[k], k
        assert par["where"]["backend"] == "ray" and par["lost_pairs"] == []
