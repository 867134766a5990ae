"""A Ray cluster of several nodes on this machine (``ray.cluster_utils.Cluster``, every node on
127.0.0.1): what changes when the work really is spread over nodes.

* The loop's trainer goes to the node that has the GPU (declared; this machine has none, so torch
  there trains on the CPU) while the driver stays on the head node, and its weights equal
  training in the driver.
* A node removed in the middle of self-play (its raylet and every process on it killed, as when a
  machine goes down) loses only the batch its worker was playing: the batch is played again when
  a replacement node joins, every batch is written once, and the files equal the undisturbed
  run's.

The driver joins the cluster by its ``HOST:PORT`` address, as ``--address`` does.
"""
from __future__ import annotations

import time
from typing import Any, Dict, Iterator, List

import pytest

from conftest import RAY_REASON

ray = pytest.importorskip("ray", reason=RAY_REASON)
from ray.cluster_utils import Cluster  # noqa: E402

pytestmark = pytest.mark.usefixtures("time_bound")

from gomoku_ai.training.selfplay import read_jsonl, run_selfplay, selfplay_spec  # noqa: E402
from gomoku_ai.workers import make_pool  # noqa: E402

from test_selfplay import SP, assert_same_batches, tiny_model  # noqa: E402,F401

ALARM_S = 300             # per test, node start-ups included
LIMIT_S = 120.0           # per self-play batch attempt
LOOPBACK = "127.0.0.1"



@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Head node (1 CPU, where the driver attaches) + a GPU node (2 CPUs, 1 declared GPU), all on
    loopback. The driver joins through ``init_ray(address)``, as ``--address HOST:PORT`` does."""
    from gomoku_ai.workers.ray_backend import _loopback_only, init_ray
    with _loopback_only(True):
        c = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "include_dashboard": False, "node_ip_address": LOOPBACK})
        c.gpu_node = c.add_node(num_cpus=2, num_gpus=1, node_ip_address=LOOPBACK)
    try:
        init_ray(c.address)
        yield c
    finally:
        ray.shutdown()
        c.shutdown()


def _node_id(node: Any) -> str:
    return node.node_id


def test_the_driver_joins_by_address_and_every_node_is_on_loopback(cluster) -> None:
    assert cluster.address.startswith(f"{LOOPBACK}:")
    nodes = [n for n in ray.nodes() if n["Alive"]]
    assert len(nodes) == 2 and {n["NodeManagerAddress"] for n in nodes} == {LOOPBACK}
    assert ray.get_runtime_context().get_node_id() == _node_id(cluster.head_node)
    assert ray.cluster_resources().get("GPU") == 1.0


def test_the_loop_trains_on_the_gpu_node(cluster, tmp_path) -> None:
    torch = pytest.importorskip("torch", reason="the loop trains with torch")
    from gomoku_ai.fileio import read_jsonl as read_lines
    from gomoku_ai.training.loop import Loop
    from gomoku_ai.training.trainer import load_checkpoint
    from test_distributed_training import CFG
    ref, run = tmp_path / "ref", tmp_path / "ray"
    Loop(ref, dict(CFG, trainer="driver")).run(1)
    notes: List[Dict[str, Any]] = []
    Loop(run, dict(CFG, backend="ray", address=cluster.address), log=notes.append).run(1)
    assert {"note": 'trainer: {"on": "worker", "num_gpus": 1.0}'} in notes
    (rec,) = read_lines(run / "loop.jsonl")
    t = rec["train"]["trainer"]
    assert t["node_id"] == _node_id(cluster.gpu_node) != ray.get_runtime_context().get_node_id()
    assert t["gpu_ids"] == ["0"] and t["worker"].startswith(f"ray-0@{LOOPBACK}:")
    a = load_checkpoint(ref / "train" / "checkpoint.pt")["model"]
    b = load_checkpoint(run / "train" / "checkpoint.pt")["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_node_that_goes_down_mid_selfplay_loses_only_its_batch(cluster, tiny_model,
                                                                  tmp_path) -> None:
    """One self-play worker per CPU of three nodes; once a worker on another node has written a
    batch while the third node's worker is still playing one, that node is removed. Its batch
    comes back lost and is played again on a node that joins afterwards. (Removing it when its
    batch had just ended, as a loaded machine allowed before, lost nothing.)"""
    doomed = cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)
    kw = dict(SP, visits_full=160, visits_fast=40, games_per_shard=2)
    ref, out = tmp_path / "ref", tmp_path / "out"
    run_selfplay(tiny_model, ref, games=16, seed=11, workers=2, backend="local",
                 batch_limit_s=LIMIT_S, **kw)
    pool = make_pool(selfplay_spec(), 4, backend="ray", address=cluster.address,
                     start_timeout_s=120)
    try:
        on_doomed = [name for name, nid in pool.worker_nodes().items()
                     if nid == _node_id(doomed)]
        assert len(on_doomed) == 1 and len(set(pool.worker_nodes().values())) == 3
        removed: List[float] = []

        def log(rec) -> None:
            if (not removed and not rec.get("lost") and rec["worker"] != on_doomed[0]
                    and on_doomed[0] in pool.running_workers()):
                cluster.remove_node(doomed, allow_graceful=False)
                removed.append(time.monotonic())
                cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)   # the replacement

        res = run_selfplay(tiny_model, out, games=16, seed=11, pool=pool, log=log,
                           batch_limit_s=LIMIT_S, **kw)
        assert removed and pool.lost_attempts >= 1
        assert res["lost_batches"] == [] and res["played_batches"] == 8 and res["games"] == 16
        lines = read_jsonl(out / "selfplay.jsonl")
        assert sorted(ln["batch"] for ln in lines) == list(range(8))       # exactly once each
        assert not any(ln.get("lost") for ln in lines)
        assert any(ln["attempts"] == 2 for ln in lines)
        assert on_doomed[0] not in {ln["worker"] for ln in lines if ln["attempts"] == 2}
        assert_same_batches(ref, out, [f"sp-{i:05d}" for i in range(8)])
    finally:
        pool.close()


def test_loopback_addresses_are_recognised() -> None:
    from gomoku_ai.workers.ray_backend import _is_loopback
    assert _is_loopback("127.0.0.1:6379") and _is_loopback("localhost:6379")
    assert not _is_loopback("10.0.0.1:6379") and not _is_loopback("auto")
    assert not _is_loopback(None) and not _is_loopback("head.example:6379")
