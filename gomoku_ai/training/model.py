"""The torch policy/value network: the same architecture as :mod:`gomoku_ai.net.weights`, trained
here and exported to the torch-free model files the engine loads.

Fully convolutional (KataGo-style): the policy comes from a 1x1 convolution and the value from global
mean and max pooling, so one network plays 15x15, 20x20 and rectangular boards.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

from ..net.symmetries import source_squares, transformed_shape
from ..net.weights import BN_EPS, Arch


class ConvBN(nn.Module):
    def __init__(self, cin: int, cout: int, k: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=BN_EPS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


class ResBlock(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = ConvBN(c, c, 3)
        self.conv2 = ConvBN(c, c, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv1(x))
        return F.relu(x + self.conv2(y))


class PolicyValueNet(nn.Module):
    """Input (N, P, H, W) float planes; output (policy logits (N, H*W), value (N,) in [-1, 1] for
    the side to move)."""

    def __init__(self, arch: Arch) -> None:
        super().__init__()
        self.arch = arch
        c, hc = arch.channels, arch.head_channels
        self.stem = ConvBN(arch.planes, c, 3)
        self.blocks = nn.ModuleList(ResBlock(c) for _ in range(arch.blocks))
        self.policy_conv1 = ConvBN(c, hc, 1)
        self.policy_conv2 = nn.Conv2d(hc, 1, 1, bias=True)
        self.value_conv1 = ConvBN(c, hc, 1)
        self.value_fc1 = nn.Linear(2 * hc, arch.value_fc)
        self.value_fc2 = nn.Linear(arch.value_fc, 1)

    def freeze_all_but_value_head(self) -> List[nn.Module]:
        """Stop every parameter outside the value head (``value_conv1``, ``value_fc1``, ``value_fc2``) from
        learning; returns the frozen modules (every other top-level module, so that one added later is
        frozen too), which the trainer keeps in eval mode."""
        head = (self.value_conv1, self.value_fc1, self.value_fc2)
        frozen = [m for m in self.children() if not any(m is h for h in head)]
        for m in frozen:
            m.requires_grad_(False)
        for m in head:
            m.requires_grad_(True)
        return frozen

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        h = F.relu(self.stem(x))
        for blk in self.blocks:
            h = blk(h)
        p = self.policy_conv2(F.relu(self.policy_conv1(h))).flatten(1)
        v = F.relu(self.value_conv1(h))
        pooled = torch.cat([v.mean(dim=(2, 3)), v.amax(dim=(2, 3))], dim=1)
        v = torch.tanh(self.value_fc2(F.relu(self.value_fc1(pooled)))).squeeze(1)
        return p, v

    # ------------------------------------------------------------------ weight exchange
    # the items are torch modules (ConvBN; Conv2d, Linear), typed Any: torch types a module found in a
    # ModuleList as Module and its bias or running statistics as Optional, which these always have
    def _convbn_items(self) -> Iterator[Tuple[str, Any]]:
        yield "stem", self.stem
        for i, blk in enumerate(self.blocks):
            yield f"block{i}.conv1", blk.conv1
            yield f"block{i}.conv2", blk.conv2
        yield "policy.conv1", self.policy_conv1
        yield "value.conv1", self.value_conv1

    def _plain_items(self) -> Iterator[Tuple[str, Any]]:
        yield "policy.conv2", self.policy_conv2
        yield "value.fc1", self.value_fc1
        yield "value.fc2", self.value_fc2

    def unfolded_weights(self) -> Dict[str, np.ndarray]:
        """The weights under the unfolded key names of :mod:`gomoku_ai.net.weights`."""
        out: Dict[str, np.ndarray] = {}

        def a(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().float().numpy().copy()

        for name, m in self._convbn_items():
            out[f"{name}.w"] = a(m.conv.weight)
            out[f"{name}.bn.gamma"] = a(m.bn.weight)
            out[f"{name}.bn.beta"] = a(m.bn.bias)
            out[f"{name}.bn.mean"] = a(m.bn.running_mean)
            out[f"{name}.bn.var"] = a(m.bn.running_var)
        for name, m in self._plain_items():
            out[f"{name}.w"] = a(m.weight)
            out[f"{name}.b"] = a(m.bias)
        return out

    def load_unfolded(self, w: Dict[str, np.ndarray]) -> None:
        """Load weights given under the unfolded key names (e.g. :func:`random_model`)."""
        def t(key: str) -> torch.Tensor:
            return torch.from_numpy(np.asarray(w[key], np.float32))

        with torch.no_grad():
            for name, m in self._convbn_items():
                m.conv.weight.copy_(t(f"{name}.w"))
                m.bn.weight.copy_(t(f"{name}.bn.gamma"))
                m.bn.bias.copy_(t(f"{name}.bn.beta"))
                m.bn.running_mean.copy_(t(f"{name}.bn.mean"))
                m.bn.running_var.copy_(t(f"{name}.bn.var"))
            for name, m in self._plain_items():
                m.weight.copy_(t(f"{name}.w"))
                m.bias.copy_(t(f"{name}.b"))


def dihedral(x: torch.Tensor, k: int) -> torch.Tensor:
    """Apply symmetry ``k`` of :mod:`gomoku_ai.net.symmetries` (the project's one numbering) to the
    last two axes, on the tensor's device: ``transform_planes`` for tensors. Square boards only for
    the ids that transpose (4..7)."""
    if k == 0:
        return x
    h, w = x.shape[-2:]
    key = (k, h, w, str(x.device))
    src = _SOURCES.get(key)
    if src is None:
        src = _SOURCES[key] = torch.from_numpy(source_squares(k, h, w)).to(x.device)
    return x.flatten(-2).index_select(-1, src).unflatten(-1, transformed_shape(k, h, w))


#: (k, H, W, device) -> the source squares of :func:`dihedral` on that device
_SOURCES: Dict[tuple, torch.Tensor] = {}
