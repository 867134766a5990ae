"""The worker pools: the same behaviour from the local backend and from Ray (a private Ray
instance on this machine, loopback only, started once for the module)."""
from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from gomoku_ai.workers import ModelCache, ModelRef, Task, WorkerError, WorkerSpec, make_pool, model_version
from gomoku_ai.workers.base import resolve

from conftest import HAVE_RAY

PROBE = WorkerSpec("gomoku_ai.workers.testing:ProbeWorker", {"tag": "t"})
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", params=["local", "ray"])
def pool(request: pytest.FixtureRequest) -> Iterator:
    if request.param == "ray" and not HAVE_RAY:
        pytest.fail("Ray is not installed (it is in the dev extra: pip install -e '.[dev]')")
    p = make_pool(PROBE, 2, backend=request.param, max_attempts=2)
    yield p
    p.close()


def wait_for_workers(pool, n: int, timeout_s: float = 30.0) -> dict:
    """The pool's worker pids once ``n`` workers are up, or what there is after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while len(pool.worker_pids()) < n and time.monotonic() < end:
        time.sleep(0.05)
    return pool.worker_pids()


def tasks(n: int, **extra) -> list:
    return [Task(i, {"x": i, **extra}) for i in range(n)]


def test_every_task_once_with_its_value(pool) -> None:
    res = list(pool.run(tasks(12, sleep=0.4)))   # long enough for both workers to be up (2.4 s each)
    assert sorted(r.key for r in res) == list(range(12))
    assert all(r.ok and r.value["y"] == r.key ** 2 for r in res)
    assert all(r.attempts == 1 for r in res)
    assert all(r.value["threads"] == "1" for r in res)          # one thread per worker
    assert len({r.value["pid"] for r in res}) == 2              # both workers did work
    assert {r.worker.split("@")[0] for r in res} <= {f"{pool.backend}-{i}" for i in range(10)}


def test_workers_are_built_once_and_reused_across_runs(pool) -> None:
    first = list(pool.run(tasks(4)))
    second = list(pool.run(tasks(4)))
    pids = {r.value["pid"] for r in first} | {r.value["pid"] for r in second}
    assert pids <= set(pool.worker_pids().values())
    # a worker's task counter keeps growing: the same object ran tasks of both runs
    by_pid = {}
    for r in first + second:
        by_pid.setdefault(r.value["pid"], []).append(r.value["ran"])
    assert max(len(v) for v in by_pid.values()) >= 2
    # no worker was rebuilt: each one's counter never repeats a value
    assert all(len(set(v)) == len(v) for v in by_pid.values())


def test_a_task_error_is_reported_not_retried(pool) -> None:
    res = {r.key: r for r in pool.run([Task("bad", {"raise": "boom"}), Task("good", {"x": 3})])}
    assert res["bad"].kind == "error" and "boom" in res["bad"].error and res["bad"].attempts == 1
    assert res["good"].ok and res["good"].value["y"] == 9


def test_a_worker_that_dies_mid_task_loses_only_that_attempt(pool, tmp_path: Path) -> None:
    marker = tmp_path / f"died-{pool.backend}"
    before = pool.lost_attempts
    ts = [Task(i, {"x": i, "sleep": 0.05}) for i in range(8)]
    ts[3] = Task(3, {"x": 3, "die_once": str(marker)})
    res = list(pool.run(ts))
    assert marker.exists()                                  # the worker really died
    assert sorted(r.key for r in res) == list(range(8))     # nothing lost, nothing twice
    assert all(r.ok for r in res)
    by_key = {r.key: r for r in res}
    assert by_key[3].attempts == 2 and by_key[3].value["pid"] != int(marker.read_text())
    assert pool.lost_attempts == before + 1
    # and the pool is back at full strength for the next run (once the replacement is up: a Ray actor takes
    # seconds to start on a loaded machine)
    assert len(wait_for_workers(pool, 2)) == 2
    assert len({r.value["pid"] for r in pool.run(tasks(8, sleep=0.4))}) == 2


def test_a_worker_killed_from_outside_is_replaced(pool) -> None:
    """SIGKILL to a worker process while it runs a long task (as a dying node would)."""
    victims = []

    def killer() -> None:
        time.sleep(1.0)
        pid = sorted(pool.worker_pids().values())[0]
        victims.append(pid)
        os.kill(pid, signal.SIGKILL)

    th = threading.Thread(target=killer)
    th.start()
    res = list(pool.run([Task(i, {"x": i, "sleep": 2.0}) for i in range(2)]))
    th.join()
    assert sorted(r.key for r in res) == [0, 1] and all(r.ok for r in res)
    assert sum(r.attempts for r in res) == 3
    assert all(r.value["pid"] != victims[0] for r in res)
    # the replacement is named like the others (with its node and pid once it has answered)
    pids = wait_for_workers(pool, 2)
    assert len(pids) == 2 and victims[0] not in pids.values()
    assert {r.worker for r in res} <= set(pool.worker_pids())


def test_every_attempt_lost_means_lost_never_a_value(tmp_path: Path) -> None:
    with make_pool(PROBE, 1, backend="local", max_attempts=1) as p:
        res = list(p.run([Task("x", {"die_once": str(tmp_path / "m")}), Task("y", {"x": 2})]))
    by = {r.key: r for r in res}
    assert by["x"].kind == "lost" and by["x"].value is None and "died" in by["x"].error
    assert by["y"].ok


def test_time_limit_kills_the_attempt() -> None:
    with make_pool(PROBE, 1, backend="local", max_attempts=2) as p:
        res = list(p.run([Task("slow", {"sleep": 30}, limit_s=0.5), Task("fast", {"x": 1})]))
    by = {r.key: r for r in res}
    assert by["slow"].kind == "lost" and "time limit" in by["slow"].error and by["slow"].attempts == 2
    assert by["fast"].ok


def test_stop_discards_unfinished_tasks(pool) -> None:
    got = []
    for r in pool.run((Task(i, {"x": i, "sleep": 0.1}) for i in range(100)),
                      stop=lambda: len(got) >= 3):
        got.append(r)
    assert 3 <= len(got) <= 4
    assert len(list(pool.run(tasks(2)))) == 2          # still usable


def test_shared_objects_reach_the_workers(pool) -> None:
    blob = pool.share(b"x" * 100_000)
    res = list(pool.run([Task(i, {"x": i, "data": blob}) for i in range(4)]))
    assert all(r.value["data_len"] == 100_000 for r in res)


def test_duplicate_keys_and_bad_specs_are_refused() -> None:
    with make_pool(PROBE, 1) as p:
        with pytest.raises(WorkerError, match="given twice"):
            list(p.run([Task(1, {}), Task(1, {})]))
    with pytest.raises(WorkerError, match="unknown backend"):
        make_pool(PROBE, 1, backend="slurm")
    with make_pool(WorkerSpec("gomoku_ai.workers.testing:Nope"), 1) as p:
        with pytest.raises(WorkerError, match="could not start"):
            list(p.run(tasks(1)))


def test_model_ref_versions_and_cache(tmp_path: Path) -> None:
    base = REPO / "models" / "gomoku8-4x32"
    ref = ModelRef.from_path(base)
    assert ref.version == model_version(str(base) + ".json")
    assert ref.version.startswith("gomoku8-4x32@") and len(ref.version.split("@")[1]) == 12
    loaded = []
    cache = ModelCache(lambda b: loaded.append(Path(b)) or f"net:{Path(b).name}")
    v1, e1 = cache.get(ref)
    v2, e2 = cache.get(ref)
    assert (v1, e1) == (v2, e2) and cache.loads == 1 and loaded[0].with_suffix(".onnx").is_file()
    other = ModelRef.from_path(REPO / "models" / "freestyle15-4x32")
    v3, _ = cache.get(other)
    assert v3 != v1 and cache.loads == 2
    assert not loaded[0].parent.exists()                        # the old version's copy is removed
    copy = loaded[1].parent
    v4, _ = cache.get(str(REPO / "models" / "gomoku8-4x32"))       # a shared path: loaded in place
    assert v4 == v1 and cache.loads == 3 and loaded[2] == REPO / "models" / "gomoku8-4x32"
    assert not copy.exists()                                         # the last copy is removed too
    cache.close()
    with pytest.raises(ValueError, match="no such model"):
        ModelRef.from_path(tmp_path / "missing")
    assert resolve(5) == 5


@pytest.mark.parametrize("pool", ["ray"], indirect=True)
def test_a_private_ray_instance_listens_on_loopback_only(pool) -> None:
    import ray
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    assert all(name.split("@")[1].startswith("127.0.0.1:") for name in pool.worker_pids())


def test_workers_that_keep_dying_at_start_are_an_error_not_a_hang() -> None:
    with make_pool(WorkerSpec("gomoku_ai.workers.testing:DiesAtStart"), 1) as p:
        with pytest.raises(WorkerError, match="in a row failed to start"):
            list(p.run(tasks(2)))


def test_a_result_that_cannot_be_sent_back_is_an_error() -> None:
    with make_pool(WorkerSpec("gomoku_ai.workers.testing:Unpicklable"), 1) as p:
        res = list(p.run(tasks(2)))
    assert [r.kind for r in res] == ["error", "error"] and all(r.attempts == 1 for r in res)
    assert "pickle" in res[0].error.lower()


def test_a_local_worker_ends_when_its_driver_is_killed(tmp_path: Path) -> None:
    """A driver killed with SIGKILL leaves no worker running (it would compete with the rerun)."""
    import subprocess
    import sys
    script = tmp_path / "driver.py"
    script.write_text(
        "from gomoku_ai.workers import Task, WorkerSpec, make_pool\n"
        "if __name__ == '__main__':\n"
        "    p = make_pool(WorkerSpec('gomoku_ai.workers.testing:ProbeWorker'), 1)\n"
        "    for r in p.run([Task(0, {'x': 1})]):\n"
        "        print(r.value['pid'], flush=True)\n"
        "    for r in p.run([Task(1, {'sleep': 60})]):\n"
        "        pass\n", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            cwd=str(REPO))
    worker = int(proc.stdout.readline())
    time.sleep(0.5)                       # the worker is now inside the 60 s task
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the worker outlived its driver by 10 s")
