"""The worker of the training loop's one pool: self-play batches and gate pairs.

The loop keeps one :class:`~gomoku_ai.workers.Pool` for a whole run, so that its workers load each
network once per version and serve both phases. :class:`TrainingWorker` dispatches a task on its
``kind``: ``"selfplay"`` to a :class:`~gomoku_ai.training.selfplay.SelfPlayWorker`, ``"gate_pair"``
to a :class:`~gomoku_ai.training.gating.GateWorker` (made at its first task). Self-play and gating
do not import each other; this module imports both.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from ..workers import WorkerSpec
from .gating import GateWorker
from .selfplay import SelfPlayWorker

__all__ = ["TrainingWorker", "training_spec"]


class TrainingWorker:
    """Self-play batches and gate pairs on one worker (see the module docstring)."""

    def __init__(self, net_backend: str = "auto") -> None:
        self.net_backend = net_backend
        self.selfplay = SelfPlayWorker(net_backend)
        self._gate: Optional[GateWorker] = None

    def run(self, payload: Dict[str, Any]) -> Dict[str, Any]:
        """One task: a self-play batch or a gate pair (ValueError for any other ``kind``)."""
        kind = payload.get("kind", "selfplay")
        if kind == "gate_pair":
            if self._gate is None:
                self._gate = GateWorker(self.net_backend)
            return self._gate.run(payload)
        return self.selfplay.run(payload)

    def close(self) -> None:
        self.selfplay.close()
        if self._gate is not None:
            self._gate.close()


def training_spec(net_backend: str = "auto") -> WorkerSpec:
    """The :class:`WorkerSpec` of the training loop's workers: one thread, one CPU each."""
    return WorkerSpec(f"{__name__}:TrainingWorker", {"net_backend": net_backend}, threads=1)
