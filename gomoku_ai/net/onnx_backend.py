"""Inference with onnxruntime (imported lazily, only when this backend is used).

The session is single-threaded by default (``intra_op_num_threads=1``, ``inter_op_num_threads=1``,
sequential execution): the search decides how many evaluations run in parallel.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np


def onnxruntime_available() -> bool:
    """True when ``import onnxruntime`` works."""
    try:
        import onnxruntime  # noqa: F401
    except Exception:  # ImportError, or a broken native library
        return False
    return True


class OnnxBackend:
    """An onnxruntime session over the model's ``.onnx`` graph (given as bytes)."""

    def __init__(self, model_bytes: bytes, threads: int = 1, source: str = "model.onnx",
                 name: str = "onnx") -> None:
        import onnxruntime as ort

        self.name = name    # "onnx" (the float graph) or "onnx-int8" (the quantised one)

        so = ort.SessionOptions()
        so.intra_op_num_threads = max(1, int(threads))
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3  # errors only
        if threads <= 1:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.threads = threads
        self.source = source
        self.session = ort.InferenceSession(model_bytes, sess_options=so,
                                            providers=["CPUExecutionProvider"])
        self._outputs = ["policy", "value"]

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(N, P, H, W) float32 -> (policy logits (N, H*W), value (N,))."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        policy, value = self.session.run(self._outputs, {"input": x})
        return policy, value.reshape(-1)
