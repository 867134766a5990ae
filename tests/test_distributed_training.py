"""Training on a worker (:mod:`gomoku_ai.training.remote`): the loop's training steps run in a
pool worker instead of the driver, on the local backend and as a Ray actor that asks for the
cluster's GPU.

The reference is the same loop trained in the driver. With fixed seeds the worker's checkpoint is
the driver's tensor for tensor, so training on a worker changes where, not what. The Ray instance
is private (loopback only) and declares one GPU, which this machine does not have: Ray schedules
the trainer on it and gives it GPU id 0, and torch there finds no CUDA and trains on the CPU, as
a CPU-only torch on a GPU node would. A trainer SIGKILLed mid-training loses that attempt only.
"""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

torch = pytest.importorskip("torch", reason="the loop trains with torch")

from gomoku_ai.fileio import read_jsonl  # noqa: E402
from gomoku_ai.training.loop import Loop, LoopConfig  # noqa: E402
from gomoku_ai.training.trainer import load_checkpoint  # noqa: E402

from test_selfplay import LOOP_CFG  # noqa: E402

from conftest import needs_ray  # noqa: E402
pytestmark = pytest.mark.usefixtures("time_bound")

ALARM_S = 240             # per test, Ray start included
CFG = dict(LOOP_CFG, gate_games=0, steps_per_iter=400, workers=1)



def _run(run: Path, notes: List[Dict[str, Any]], **cfg: Any) -> Loop:
    loop = Loop(run, dict(CFG, **cfg), log=notes.append)
    loop.run(1)
    return loop


def _train_record(run: Path) -> Dict[str, Any]:
    (rec,) = read_jsonl(run / "loop.jsonl")
    return rec["train"]


def _same_weights(a: Path, b: Path) -> None:
    ca = load_checkpoint(a / "train" / "checkpoint.pt")
    cb = load_checkpoint(b / "train" / "checkpoint.pt")
    assert ca["step"] == cb["step"] == 400
    assert set(ca["model"]) == set(cb["model"])
    for k in ca["model"]:
        assert torch.equal(ca["model"][k], cb["model"][k]), k
    for sa, sb in zip(ca["optimizer"]["state"].values(), cb["optimizer"]["state"].values()):
        assert torch.equal(sa["exp_avg"], sb["exp_avg"])


def _log_lines(run: Path) -> List[Dict[str, Any]]:
    """The trainer's log lines less their clock fields."""
    return [{k: v for k, v in r.items() if k not in ("time", "positions_per_s")}
            for r in read_jsonl(run / "train" / "log.jsonl")]


@pytest.fixture(autouse=True)
def no_cuda_here(monkeypatch) -> None:
    """"auto" keeps training in a driver that has CUDA; these tests are about a driver without."""
    import gomoku_ai.training.loop as loop_mod
    monkeypatch.setattr(loop_mod, "_driver_has_cuda", lambda: False)


def _cpu_everywhere() -> bool:
    """The worker trains where the reference did (on a machine with CUDA a GPU worker does not)."""
    return not torch.cuda.is_available()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """One iteration trained in the driver on the CPU (self-play on one local worker)."""
    run = tmp_path_factory.mktemp("ref") / "az"
    notes: List[Dict[str, Any]] = []
    _run(run, notes, trainer="driver", device="cpu")
    assert _train_record(run)["trainer"] == {"on": "driver", "device": "cpu"}
    return run


class FailingPool:
    """Wraps the training pool: the chunk that trains to step ``upto`` comes back ``kind`` (every
    attempt)."""

    def __init__(self, pool: Any, upto: int, kind: str) -> None:
        self.pool, self.upto, self.kind, self.calls = pool, upto, kind, 0

    def share(self, obj: Any) -> Any:
        return self.pool.share(obj)

    def run(self, tasks, stop=None):
        from gomoku_ai.workers import TaskResult
        for t in tasks:
            if t.key[2] == self.upto:
                self.calls += 1
                why = ("Traceback ...\nRuntimeError: CUDA error: boom" if self.kind == "error"
                       else "worker local-9 died (its pipe closed) (attempt 2 of 2)")
                yield TaskResult(t.key, self.kind, error=why, attempts=2, worker="local-9")
            else:
                yield from self.pool.run([t], stop)

    def describe(self) -> Dict[str, Any]:
        return self.pool.describe()

    def close(self) -> None:
        self.pool.close()


def test_a_local_training_worker_gives_the_drivers_weights(reference, tmp_path,
                                                          monkeypatch) -> None:
    run = tmp_path / "az"
    notes: List[Dict[str, Any]] = []
    _run(run, notes, trainer="worker", train_chunk=150, device="cpu")
    t = _train_record(run)
    assert t["trainer"]["on"] == "worker" and t["trainer"]["worker"] == "local-0"
    assert t["trainer"]["pid"] != os.getpid() and t["trainer"]["gpu_ids"] == []
    assert t["steps"] == 400 and t["step"] == 400
    assert any(n.get("note", "").startswith('trainer: {"on": "worker"') for n in notes)
    # chunks of 150 steps: 150, 300, 400 -- the checkpoint after each, the log lines once each
    finals = [r["step"] for r in read_jsonl(run / "train" / "log.jsonl") if r.get("final")]
    assert finals == [150, 300, 400]
    # chunking restarts the sampler at each chunk: same data, different batches, so compare the
    # unchunked run for bit-equality
    run1 = tmp_path / "az1"
    _run(run1, [], trainer="worker", device="cpu")
    _same_weights(reference, run1)
    assert _log_lines(reference) == _log_lines(run1)
    assert [r["step"] for r in read_jsonl(run1 / "train" / "log.jsonl") if r.get("final")] == [400]

    # the chunk to step 300 is lost every time: the loop stops with a clear error after chunk 1
    # was installed, and a rerun continues from step 150 to the same weights as run "az"
    from gomoku_ai.training.loop import LoopError
    run2 = tmp_path / "az2"
    real = Loop.train_pool
    failing: List[FailingPool] = []

    def lossy(self):
        if self._train_pool is None:
            failing.append(FailingPool(real(self), 300, "lost"))
            self._train_pool = failing[-1]
        return self._train_pool

    monkeypatch.setattr(Loop, "train_pool", lossy)
    with pytest.raises(LoopError, match=r"iteration 1: the training worker was lost 3 times "
                                        r"training to step 300 \(worker local-9 died .*\); "
                                        r"the run resumes from step 150"):
        _run(run2, [], trainer="worker", train_chunk=150, device="cpu")
    assert failing[0].calls == 3
    assert load_checkpoint(run2 / "train" / "checkpoint.pt")["step"] == 150
    assert not (run2 / "loop.jsonl").exists()
    assert json.loads((run2 / "state.json").read_text())["current"]["phase"] == "train"
    monkeypatch.setattr(Loop, "train_pool", real)
    loop = Loop(run2, log=[].append)
    loop.run(1)
    assert [r["step"] for r in read_jsonl(run2 / "train" / "log.jsonl") if r.get("final")] == \
        [150, 300, 400]
    _same_weights(run, run2)
    assert _train_record(run2)["steps"] == 250           # 150 were trained before the rerun


def test_an_exception_in_the_training_worker_stops_the_loop_with_its_traceback(
        tmp_path, monkeypatch) -> None:
    from gomoku_ai.training.remote import TrainerFailed
    real = Loop.train_pool

    def failing(self):
        if self._train_pool is None:
            self._train_pool = FailingPool(real(self), 400, "error")
        return self._train_pool

    monkeypatch.setattr(Loop, "train_pool", failing)
    with pytest.raises(TrainerFailed, match="(?s)training on worker local-9 failed.*CUDA error: boom"):
        _run(tmp_path / "az", [], trainer="worker", device="cpu")
    assert load_checkpoint(tmp_path / "az" / "train" / "checkpoint.pt")["step"] == 0


def test_trainer_choice(tmp_path, monkeypatch) -> None:
    import gomoku_ai.training.loop as loop_mod
    import gomoku_ai.training.remote as remote
    assert Loop(tmp_path / "a", dict(CFG)).trainer() == {"on": "driver"}        # local: auto
    assert Loop(tmp_path / "b", dict(CFG, trainer="worker")).trainer() == \
        {"on": "worker", "num_gpus": 0.0}
    with pytest.raises(ValueError, match="unknown trainer 'gpu'"):
        LoopConfig.from_dict(dict(CFG, trainer="gpu"))
    cfg = json.loads((tmp_path / "b" / "config.json").read_text())
    assert cfg["trainer"] == "worker" and cfg["trainer_gpus"] == 1.0 and cfg["train_chunk"] == 0
    # on a Ray cluster "auto" follows the cluster's GPUs (faked here; Ray is not started)
    monkeypatch.setattr(Loop, "_ensure_ray", lambda self: None)
    for gpus, cfg_over, want in [
            (0.0, {}, {"on": "driver"}),
            (1.0, {}, {"on": "worker", "num_gpus": 1.0}),
            (1.0, {"device": "cpu"}, {"on": "driver"}),
            (1.0, {"trainer_gpus": 2.0}, {"on": "driver"}),            # not enough GPUs
            (4.0, {"trainer_gpus": 0.5}, {"on": "worker", "num_gpus": 0.5}),
            (1.0, {"trainer": "driver"}, {"on": "driver"}),
            (0.0, {"trainer": "worker"}, {"on": "worker", "num_gpus": 0.0}),
            (1.0, {"trainer": "worker", "device": "cpu"}, {"on": "worker", "num_gpus": 0.0})]:
        monkeypatch.setattr(remote, "cluster_gpus", lambda g=gpus: g)
        loop = Loop(tmp_path / f"r{gpus}{sorted(cfg_over.items())}",
                    dict(CFG, backend="ray", **cfg_over))
        assert loop.trainer() == want, (gpus, cfg_over)
    # CUDA in the driver: "auto" trains there, whatever the cluster has
    monkeypatch.setattr(loop_mod, "_driver_has_cuda", lambda: True)
    monkeypatch.setattr(remote, "cluster_gpus", lambda: 8.0)
    assert Loop(tmp_path / "c", dict(CFG, backend="ray")).trainer() == {"on": "driver"}
    # what a GPU worker is sent: one thread, its one visible GPU
    from gomoku_ai.training.remote import trainer_spec, worker_train_config
    from gomoku_ai.training.trainer import TrainConfig
    tc = TrainConfig(threads=4, device="cuda:3")
    assert worker_train_config(tc, 1.0)["threads"] == 1 and worker_train_config(tc, 1.0)["device"] == "cuda"
    assert worker_train_config(tc, 0.0)["threads"] == 4 and worker_train_config(tc, 0.0)["device"] == "cuda:3"
    g, c = trainer_spec(4, 1.0), trainer_spec(4, 0.0)
    assert (g.threads, g.num_cpus, g.num_gpus) == (1, 1.0, 1.0)
    assert (c.threads, c.num_cpus, c.num_gpus) == (4, 4.0, 0.0)


def test_a_corrupt_checkpoint_from_a_worker_is_refused(tmp_path) -> None:
    from gomoku_ai.training.remote import _install_checkpoint
    from gomoku_ai.training.trainer import CheckpointError
    ck = tmp_path / "checkpoint.pt"
    ck.write_bytes(b"old")
    with pytest.raises(CheckpointError, match="checkpoint.pt.incoming"):
        _install_checkpoint(ck, b"not a checkpoint", 5, "ray-1")
    assert ck.read_bytes() == b"old" and not (tmp_path / "checkpoint.pt.incoming").exists()


# ---------------------------------------------------------------------------------------- Ray
@needs_ray
def test_a_loop_on_ray_starts_its_own_instance_with_a_cpu_for_the_trainer_and_stops_it(
        tmp_path) -> None:
    """No cluster given: the loop starts a private instance with one CPU per self-play worker plus
    the training worker's, places the trainer first, and shuts the instance down at the end.
    (This module's other Ray tests share one instance, started after this test.)"""
    import ray
    assert not ray.is_initialized()
    seen: List[Dict[str, Any]] = []

    def log(rec: Dict[str, Any]) -> None:
        if rec.get("phase") == "train":
            seen.append(dict(ray.cluster_resources()))
        notes.append(rec)

    notes: List[Dict[str, Any]] = []
    loop = Loop(tmp_path / "az", dict(CFG, backend="ray", trainer="worker", threads=1,
                                      device="cpu", steps_per_iter=20), log=log)
    loop.run(1)
    assert seen and seen[0]["CPU"] == 2.0 and "GPU" not in seen[0]
    msgs = [n["note"] for n in notes if "note" in n]
    assert msgs.index(next(m for m in msgs if m.startswith("training worker:"))) < \
        msgs.index(next(m for m in msgs if m.startswith("workers:")))
    assert _train_record(tmp_path / "az")["trainer"]["worker"].startswith("ray-0@127.0.0.1:")
    assert not ray.is_initialized()


@pytest.fixture(scope="module")
def ray_gpu_cluster() -> Iterator[None]:
    """A private loopback Ray instance with 3 CPUs and one declared GPU."""
    from gomoku_ai.workers.ray_backend import init_ray
    r = init_ray(None, num_cpus=3, num_gpus=1)
    try:
        yield
    finally:
        r.shutdown()


@needs_ray
def test_auto_trains_on_the_clusters_gpu_worker(ray_gpu_cluster, reference, tmp_path) -> None:
    run = tmp_path / "az"
    notes: List[Dict[str, Any]] = []
    _run(run, notes, backend="ray")
    assert {"note": 'trainer: {"on": "worker", "num_gpus": 1.0}'} in notes
    desc = next(n["note"] for n in notes if n.get("note", "").startswith("training worker:"))
    assert '"backend": "ray"' in desc and '"num_gpus": 1.0' in desc
    t = _train_record(run)["trainer"]
    assert t["on"] == "worker" and t["worker"].startswith("ray-") and t["gpu_ids"] == ["0"]
    assert t["device"] == ("cuda:0" if torch.cuda.is_available() else "cpu")
    assert t["pid"] != os.getpid() and t["attempts"] == 1
    if _cpu_everywhere():
        _same_weights(reference, run)
        assert _log_lines(reference) == _log_lines(run)


@needs_ray
def test_a_training_actor_killed_mid_training_loses_only_that_attempt(
        ray_gpu_cluster, reference, tmp_path) -> None:
    """SIGKILL the trainer actor as soon as its chunk has been sent to it: the attempt is lost,
    the chunk starts again on a fresh actor from the same checkpoint, and the run ends with the
    reference's weights and one set of log lines."""
    run = tmp_path / "az"
    loop = Loop(run, dict(CFG, backend="ray", trainer="worker"))
    killed: List[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            pool = loop._train_pool
            busy = [a for a in pool._actors.values() if a.job is not None] if pool else []
            if busy and busy[0].pid is not None:
                os.kill(busy[0].pid, signal.SIGKILL)
                killed.append(busy[0].pid)
            time.sleep(0.01)

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    loop.run(1)
    th.join(5)
    assert killed
    t = _train_record(run)["trainer"]
    assert t["attempts"] == 2 and t["pid"] != killed[0] and t["gpu_ids"] == ["0"]
    if _cpu_everywhere():
        _same_weights(reference, run)
        assert _log_lines(reference) == _log_lines(run)
