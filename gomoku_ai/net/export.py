"""Build the ``.onnx`` graph of a folded weight dictionary with the ``onnx`` helper API.

``onnx`` is imported only inside :func:`build_onnx` (it is an export-time dependency, in the train
and dev extras; playing needs only onnxruntime or numpy).

Graph: input ``input`` float32 (N, P, H, W) with dynamic N, H, W; outputs ``policy`` (N, H*W)
logits and ``value`` (N, 1) in [-1, 1]. Opset 17, IR version 8 (loadable by onnxruntime >= 1.14).
Initializers carry the weight dictionary's key names.
"""
from __future__ import annotations

from typing import Any, List, Mapping

import numpy as np

from .weights import Arch

OPSET = 17
IR_VERSION = 8


def build_onnx(weights: Mapping[str, np.ndarray], arch: Arch, graph_name: str = "gomoku") -> bytes:
    """The serialized ONNX model of the folded ``weights`` (checked with ``onnx.checker``)."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("exporting a model needs the 'onnx' package (pip install onnx, or the "
                          "train/dev extra); pass with_onnx=False to write only .npz + .json") \
            from e

    nodes: List[Any] = []
    inits = [numpy_helper.from_array(np.ascontiguousarray(np.asarray(v, np.float32)), name=k)
             for k, v in sorted(weights.items())]

    def node(op: str, inputs: List[str], output: str, name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    def conv(x: str, layer: str, k: int) -> str:
        return node("Conv", [x, f"{layer}.w", f"{layer}.b"], f"{layer}.out", layer,
                    kernel_shape=[k, k], pads=[k // 2] * 4, strides=[1, 1], dilations=[1, 1])

    def relu(x: str, name: str) -> str:
        return node("Relu", [x], f"{name}.relu", f"{name}.relu")

    x = relu(conv("input", "stem", 3), "stem")
    for i in range(arch.blocks):
        h = relu(conv(x, f"block{i}.conv1", 3), f"block{i}.conv1")
        y = conv(h, f"block{i}.conv2", 3)
        s = node("Add", [y, x], f"block{i}.add", f"block{i}.add")
        x = relu(s, f"block{i}")
    p = relu(conv(x, "policy.conv1", 1), "policy.conv1")
    p = conv(p, "policy.conv2", 1)
    node("Flatten", [p], "policy", "policy.flatten", axis=1)
    v = relu(conv(x, "value.conv1", 1), "value.conv1")
    mean = node("GlobalAveragePool", [v], "value.mean", "value.mean")
    vmax = node("GlobalMaxPool", [v], "value.max", "value.max")
    cat = node("Concat", [mean, vmax], "value.cat", "value.cat", axis=1)
    flat = node("Flatten", [cat], "value.flat", "value.flat", axis=1)
    f1 = node("Gemm", [flat, "value.fc1.w", "value.fc1.b"], "value.fc1.out", "value.fc1", transB=1)
    f1 = relu(f1, "value.fc1")
    f2 = node("Gemm", [f1, "value.fc2.w", "value.fc2.b"], "value.fc2.out", "value.fc2", transB=1)
    node("Tanh", [f2], "value", "value.tanh")

    inp = helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", arch.planes, "H", "W"])
    out_p = helper.make_tensor_value_info("policy", TensorProto.FLOAT, ["N", "HxW"])
    out_v = helper.make_tensor_value_info("value", TensorProto.FLOAT, ["N", 1])
    graph = helper.make_graph(nodes, graph_name, [inp], [out_p, out_v], initializer=inits)
    model = helper.make_model(graph, producer_name="gomoku_ai",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model.SerializeToString()
