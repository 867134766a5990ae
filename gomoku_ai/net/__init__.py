"""Policy/value network inference without torch.

Two backends behind one interface, :class:`Network`: onnxruntime (``onnx_backend``), on the model's
float graph or on its int8 graph (:mod:`.quantize`), and plain numpy (``numpy_backend``);
:func:`load_model` picks the int8 graph, else the float one, when onnxruntime imports and the model
has it, else numpy. None of them imports torch or onnx; only :func:`export_model` and
:func:`~.quantize.quantize_model` need the ``onnx`` package (to build the graphs).

* :mod:`.encoding` - board -> input planes (shared with training),
* :mod:`.symmetries` - the 8 dihedral transforms of inputs and policies (augmentation),
* :mod:`.weights` - architecture, weight key names, :func:`random_model`, :func:`fold_batchnorm`,
* :mod:`.model` - file format (``.json`` + ``.npz`` + ``.onnx``, and ``.int8.onnx``), :func:`load_model`,
  :func:`export_model`,
* :mod:`.quantize` - the int8 graph of a model (``gomoku train quantize``).

Typical use::

    net = load_model("models/gm-6x64")               # auto backend, 1 thread
    priors, values = net.evaluate([board])           # priors over legal squares, value for stm
    logits, value = net.forward(encode_batch(boards))

    w = fold_batchnorm(random_model(blocks=6, channels=64, seed=1))
    export_model(w, {"name": "random", "board_sizes": [[15, 15]]}, "models/random")
"""
from __future__ import annotations

from .encoding import ENCODING_VERSION, NUM_PLANES, PLANE_NAMES, encode, encode_batch
from .model import (FORMAT_VERSION, NetBackend, Network, export_model, load_model, load_weights,
                    model_basename, network_from_weights, read_config)
from .weights import Arch, ModelError, check_weights, fold_batchnorm, infer_arch, random_model

__all__ = [
    "Arch", "ENCODING_VERSION", "FORMAT_VERSION", "ModelError", "NUM_PLANES", "NetBackend", "Network",
    "PLANE_NAMES", "check_weights", "encode", "encode_batch", "export_model", "fold_batchnorm",
    "infer_arch", "load_model", "load_weights", "model_basename", "network_from_weights",
    "random_model", "read_config",
]
