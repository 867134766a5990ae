"""Forward pass in plain numpy (BLAS), with BatchNorm already folded into the convolutions.

Layout and method (chosen by measurement, see ``benchmarks/bench_net.py``):

* activations are NHWC, held in zero-bordered buffers ``(N, H+2, W+2, C)`` so that a 3x3 conv needs
  no padding step;
* a 3x3 conv is im2col + one matmul: the im2col matrix ``(N*H*W, 9*C)`` is filled by **one**
  ``np.copyto`` from an overlapping ``as_strided`` view of the padded buffer (for a fixed row shift
  ``dy`` the three column shifts of one output square are ``3*C`` contiguous floats of the padded
  row), which is 2-2.5x faster than nine shifted copies; then ``col @ W`` with ``W`` reshaped to
  ``(kh*kw*in, out)`` writes into a preallocated output;
* bias add, residual add and ReLU are done in place, the ReLU writing straight into the interior of
  the next padded buffer;
* the policy and value 1x1 convs share one matmul (their weights are concatenated), and the value
  head's mean pool is a matmul with a 1/(H*W) row (numpy reduces slowly over a non-last axis);
* all buffers are preallocated per (N, H, W) and cached (a few shapes, least recently used first
  out), so a steady search loop allocates only its outputs.

BLAS threading is the process's: set ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` before numpy is
imported (1 for a search that runs its own threads). Calls on one backend object are serialized by a
lock (they share the buffers); give each search thread its own network to evaluate in parallel.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Mapping, Tuple

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .weights import Arch

_F32 = np.float32


def _conv_matrix(w: np.ndarray) -> np.ndarray:
    """(out, in, kh, kw) -> (kh*kw*in, out), rows in (dy, dx, c) order to match the im2col."""
    o, i, kh, kw = w.shape
    return np.ascontiguousarray(np.asarray(w, _F32).transpose(2, 3, 1, 0).reshape(kh * kw * i, o))


class _Buffers:
    """Preallocated work arrays for one (N, H, W)."""

    def __init__(self, n: int, h: int, w: int, arch: Arch) -> None:
        c, p, hc = arch.channels, arch.planes, arch.head_channels
        m = n * h * w
        self.pad_in = np.zeros((n, h + 2, w + 2, p), _F32)
        self.in_int = self.pad_in[:, 1:h + 1, 1:w + 1, :]
        self.col_in = np.empty((m, 9 * p), _F32)
        self.src_in = self._window(self.pad_in, h, w)
        self.pad_x = np.zeros((n, h + 2, w + 2, c), _F32)
        self.pad_h = np.zeros((n, h + 2, w + 2, c), _F32)
        self.x_int = self.pad_x[:, 1:h + 1, 1:w + 1, :]
        self.h_int = self.pad_h[:, 1:h + 1, 1:w + 1, :]
        self.src_x = self._window(self.pad_x, h, w)
        self.src_h = self._window(self.pad_h, h, w)
        self.col = np.empty((m, 9 * c), _F32)
        self.out = np.empty((m, c), _F32)
        self.out4 = self.out.reshape(n, h, w, c)
        self.head = np.empty((m, 2 * hc), _F32)
        self.pol = np.empty((m, 1), _F32)
        self.pooled = np.empty((n, 2 * hc), _F32)
        self.sums = np.empty((n, 1, 2 * hc), _F32)
        self.ones = np.full((1, h * w), 1.0 / (h * w), _F32)  # mean over squares as a matmul
        self.v1 = np.empty((n, arch.value_fc), _F32)
        self.v2 = np.empty((n, 1), _F32)

    @staticmethod
    def _window(pad: np.ndarray, h: int, w: int) -> np.ndarray:
        """Read-only (N, H, W, 3, 3*C) view: [n, y, x, dy] = pad[n, y+dy, x:x+3, :] flattened."""
        n, _, _, c = pad.shape
        sn, sy, sx, sc = pad.strides
        return as_strided(pad, shape=(n, h, w, 3, 3 * c), strides=(sn, sy, sx, sy, sc),
                          writeable=False)


class NumpyBackend:
    """Inference on folded weights with numpy; ``forward`` as in :class:`gomoku_ai.net.Network`."""

    name = "numpy"

    def __init__(self, weights: Mapping[str, np.ndarray], arch: Arch, max_shapes: int = 8) -> None:
        self.arch = arch
        self.max_shapes = max_shapes
        self._bufs: "OrderedDict[Tuple[int, int, int], _Buffers]" = OrderedDict()
        self._lock = threading.Lock()
        f = lambda k: np.ascontiguousarray(np.asarray(weights[k], _F32))  # noqa: E731
        self.stem_w, self.stem_b = _conv_matrix(weights["stem.w"]), f("stem.b")
        self.blocks = [(_conv_matrix(weights[f"block{i}.conv1.w"]), f(f"block{i}.conv1.b"),
                        _conv_matrix(weights[f"block{i}.conv2.w"]), f(f"block{i}.conv2.b"))
                       for i in range(arch.blocks)]
        self.head_w = np.ascontiguousarray(np.concatenate(
            [_conv_matrix(weights["policy.conv1.w"]), _conv_matrix(weights["value.conv1.w"])],
            axis=1))
        self.head_b = np.concatenate([f("policy.conv1.b"), f("value.conv1.b")])
        self.pol_w = _conv_matrix(weights["policy.conv2.w"])         # (Hc, 1)
        self.pol_b = float(np.asarray(weights["policy.conv2.b"]).reshape(-1)[0])
        self.fc1_w = np.ascontiguousarray(f("value.fc1.w").T)        # (2Hc, Vf)
        self.fc1_b = f("value.fc1.b")
        self.fc2_w = np.ascontiguousarray(f("value.fc2.w").T)        # (Vf, 1)
        self.fc2_b = f("value.fc2.b")

    def _buffers(self, n: int, h: int, w: int) -> _Buffers:
        key = (n, h, w)
        b = self._bufs.get(key)
        if b is None:
            b = _Buffers(n, h, w, self.arch)
            self._bufs[key] = b
            while len(self._bufs) > self.max_shapes:
                self._bufs.popitem(last=False)
        else:
            self._bufs.move_to_end(key)
        return b

    def forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """(N, P, H, W) float32 -> (policy logits (N, H*W), value (N,)) as new arrays."""
        with self._lock:
            return self._forward(x)

    def _forward(self, x: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        n, p, h, w = x.shape
        if p != self.arch.planes:
            raise ValueError(f"input has {p} planes, the network expects {self.arch.planes}")
        b = self._buffers(n, h, w)
        mm, add, relu, copyto = np.matmul, np.add, np.maximum, np.copyto
        out, out4 = b.out, b.out4

        # stem
        copyto(b.in_int, x.transpose(0, 2, 3, 1), casting="same_kind")
        copyto(b.col_in.reshape(b.src_in.shape), b.src_in)
        mm(b.col_in, self.stem_w, out=out)
        add(out, self.stem_b, out=out)
        last = len(self.blocks) - 1
        if last < 0:
            relu(out, 0.0, out=out)
        else:
            relu(out4, 0.0, out=b.x_int)

        # residual tower; x lives in pad_x, the block's middle activation in pad_h
        col, col5 = b.col, b.col.reshape(b.src_x.shape)
        for i, (w1, b1, w2, b2) in enumerate(self.blocks):
            copyto(col5, b.src_x)
            mm(col, w1, out=out)
            add(out, b1, out=out)
            relu(out4, 0.0, out=b.h_int)
            copyto(col5, b.src_h)
            mm(col, w2, out=out)
            add(out, b2, out=out)
            add(out4, b.x_int, out=out4)
            if i == last:
                relu(out, 0.0, out=out)      # the heads read the contiguous copy
            else:
                relu(out4, 0.0, out=b.x_int)

        # heads: policy.conv1 and value.conv1 in one matmul
        hc = self.arch.head_channels
        head = b.head
        mm(out, self.head_w, out=head)
        add(head, self.head_b, out=head)
        relu(head, 0.0, out=head)
        mm(head[:, :hc], self.pol_w, out=b.pol)
        logits = b.pol.reshape(n, h * w) + self.pol_b            # new array
        head3 = head.reshape(n, h * w, 2 * hc)
        mm(b.ones, head3, out=b.sums)                             # (N, 1, 2Hc) means
        copyto(b.pooled[:, :hc], b.sums[:, 0, hc:])
        np.maximum.reduce(head3[:, :, hc:], axis=1, out=b.pooled[:, hc:])
        mm(b.pooled, self.fc1_w, out=b.v1)
        add(b.v1, self.fc1_b, out=b.v1)
        relu(b.v1, 0.0, out=b.v1)
        mm(b.v1, self.fc2_w, out=b.v2)
        add(b.v2, self.fc2_b, out=b.v2)
        value = np.tanh(b.v2[:, 0])                               # new array
        return logits, value
