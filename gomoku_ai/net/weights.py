"""Weight dictionaries: the architecture, key names and shapes, random models and BatchNorm folding.

The network (fully convolutional, so one set of weights plays any board size):

* stem: conv3x3 P->C (no bias), BN, ReLU
* ``blocks`` residual blocks: conv3x3 C->C, BN, ReLU, conv3x3 C->C, BN, + skip, ReLU
* policy head: conv1x1 C->Hc, BN, ReLU, conv1x1 Hc->1 (bias) -> (H*W) logits, row-major ``y*W+x``
* value head: conv1x1 C->Hc, BN, ReLU, [global mean pool, global max pool] over all H*W squares
  -> (2*Hc), FC 2*Hc->Vf (bias), ReLU, FC Vf->1 (bias), tanh -> value for the side to move

Key names (all float32; conv weights (out, in, kh, kw), FC weights (out, in) as in torch):

========================  ==================  =================================================
folded key                shape               unfolded (training) keys
========================  ==================  =================================================
``stem.w`` / ``.b``       (C, P, 3, 3) / (C)  ``stem.w`` + ``stem.bn.{gamma,beta,mean,var}``
``block{i}.conv1.w``/b    (C, C, 3, 3) / (C)  ``block{i}.conv1.w`` + ``block{i}.conv1.bn.*``
``block{i}.conv2.w``/b    (C, C, 3, 3) / (C)  ``block{i}.conv2.w`` + ``block{i}.conv2.bn.*``
``policy.conv1.w``/b      (Hc, C, 1, 1)/(Hc)  ``policy.conv1.w`` + ``policy.conv1.bn.*``
``policy.conv2.w``/b      (1, Hc, 1, 1)/(1)   same (a plain conv with bias)
``value.conv1.w``/b       (Hc, C, 1, 1)/(Hc)  ``value.conv1.w`` + ``value.conv1.bn.*``
``value.fc1.w``/b         (Vf, 2Hc) / (Vf)    same
``value.fc2.w``/b         (1, Vf) / (1)       same
========================  ==================  =================================================

``i`` runs over 0..blocks-1. In the value head's FC input, the first Hc features are the means and
the last Hc the maxima. An unfolded conv that precedes a BN may also carry a bias ``<layer>.b``
(folded in as well). BatchNorm is ``gamma * (y - mean) / sqrt(var + eps) + beta`` with eps 1e-5
(torch's default); :func:`fold_batchnorm` turns each conv+BN pair into one conv with a bias.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Dict, List, Mapping, Tuple

import numpy as np

from .. import checks
from .encoding import NUM_PLANES

BN_EPS = 1e-5
BN_PARAMS = ("gamma", "beta", "mean", "var")

Weights = Dict[str, np.ndarray]


def check_arch(obj: object, name: str) -> None:
    """Field ``name`` of ``obj`` (a training config) is a dict of :class:`Arch` fields (``blocks``,
    ``channels``, ...) that makes a valid Arch."""
    value = getattr(obj, name)
    checks.require(isinstance(value, dict), obj, name, "a dict of Arch fields")
    unknown = sorted(set(value) - {f.name for f in fields(Arch)})
    checks.require(not unknown, obj, name, "a dict of Arch fields (not " + ", ".join(map(repr, unknown)) + ")")
    try:
        Arch(**value)
    except checks.ConfigError as e:
        checks.fail(obj, name, f"a valid architecture ({e})")


class ModelError(ValueError):
    """A model file or weight dictionary that cannot be used (missing, corrupt, mismatched)."""


@dataclass(frozen=True)
class Arch:
    """Architecture hyper-parameters (the defaults are the standard 6x64 network)."""

    blocks: int = 6
    channels: int = 64
    head_channels: int = 32
    value_fc: int = 64
    planes: int = NUM_PLANES

    def __post_init__(self) -> None:
        checks.non_negative(self, "blocks")
        checks.at_least(self, 1, "channels", "head_channels", "value_fc", "planes")

    def bn_convs(self) -> List[Tuple[str, int, int, int]]:
        """(name, in, out, kernel) of every conv that is followed by a BatchNorm."""
        c, hc = self.channels, self.head_channels
        out = [("stem", self.planes, c, 3)]
        for i in range(self.blocks):
            out += [(f"block{i}.conv1", c, c, 3), (f"block{i}.conv2", c, c, 3)]
        out += [("policy.conv1", c, hc, 1), ("value.conv1", c, hc, 1)]
        return out

    def plain_layers(self) -> Dict[str, Tuple[int, ...]]:
        """Weight shapes of the layers without BatchNorm (they have their own bias)."""
        hc, vf = self.head_channels, self.value_fc
        return {"policy.conv2": (1, hc, 1, 1), "value.fc1": (vf, 2 * hc), "value.fc2": (1, vf)}

    def folded_shapes(self) -> Dict[str, Tuple[int, ...]]:
        """Every key of a folded weight dictionary and its shape."""
        shapes: Dict[str, Tuple[int, ...]] = {}
        for name, cin, cout, k in self.bn_convs():
            shapes[f"{name}.w"] = (cout, cin, k, k)
            shapes[f"{name}.b"] = (cout,)
        for name, wshape in self.plain_layers().items():
            shapes[f"{name}.w"] = wshape
            shapes[f"{name}.b"] = (wshape[0],)
        return shapes

    def unfolded_shapes(self) -> Dict[str, Tuple[int, ...]]:
        """Every required key of an unfolded (conv + BN) dictionary and its shape."""
        shapes: Dict[str, Tuple[int, ...]] = {}
        for name, cin, cout, k in self.bn_convs():
            shapes[f"{name}.w"] = (cout, cin, k, k)
            for p in BN_PARAMS:
                shapes[f"{name}.bn.{p}"] = (cout,)
        for name, wshape in self.plain_layers().items():
            shapes[f"{name}.w"] = wshape
            shapes[f"{name}.b"] = (wshape[0],)
        return shapes

    def flops(self, height: int, width: int) -> int:
        """Multiply-add FLOPs (2 per MAC) of one evaluation: convs and FCs (biases, ReLU, pooling
        and BN are not counted)."""
        hw = height * width
        total = 0
        for _name, cin, cout, k in self.bn_convs():
            total += 2 * hw * cin * cout * k * k
        total += 2 * hw * self.head_channels  # policy.conv2
        total += 2 * (2 * self.head_channels * self.value_fc + self.value_fc)
        return total

    def as_config(self) -> Dict[str, int]:
        return {"blocks": self.blocks, "channels": self.channels,
                "head_channels": self.head_channels, "value_fc": self.value_fc,
                "planes": self.planes}


def infer_arch(weights: Mapping[str, np.ndarray], source: str = "weights") -> Arch:
    """Read the architecture off the shapes of a (folded or unfolded) weight dictionary."""
    try:
        stem = weights["stem.w"]
        blocks = 0
        while f"block{blocks}.conv1.w" in weights:
            blocks += 1
        return Arch(blocks=blocks, channels=int(stem.shape[0]), planes=int(stem.shape[1]),
                    head_channels=int(weights["policy.conv1.w"].shape[0]),
                    value_fc=int(weights["value.fc1.w"].shape[0]))
    except (KeyError, IndexError, AttributeError) as e:
        raise ModelError(f"{source}: cannot read the architecture (missing or malformed {e})") \
            from None


def check_weights(weights: Mapping[str, np.ndarray], arch: Arch, folded: bool = True,
                  source: str = "weights") -> None:
    """Raise :class:`ModelError` naming ``source`` unless ``weights`` has exactly the keys and
    shapes of ``arch`` (folded or unfolded; unfolded dictionaries may add ``<bn conv>.b``) and
    only finite values."""
    want = arch.folded_shapes() if folded else arch.unfolded_shapes()
    optional = set() if folded else {f"{n}.b" for n, *_ in arch.bn_convs()}
    missing = sorted(set(want) - set(weights))
    extra = sorted(set(weights) - set(want) - optional)
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''}")
        if extra:
            parts.append(f"unexpected {', '.join(extra[:6])}{' ...' if len(extra) > 6 else ''}")
        raise ModelError(f"{source}: weights do not match a {arch.blocks}x{arch.channels} network "
                         f"({'; '.join(parts)})")
    for k, shape in want.items():
        a = np.asarray(weights[k])
        if a.shape != shape:
            raise ModelError(f"{source}: {k} has shape {a.shape}, expected {shape}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"{source}: {k} contains NaN or infinite values")
    for k in optional & set(weights):
        if np.asarray(weights[k]).shape != want[k[:-2] + ".bn.beta"]:
            raise ModelError(f"{source}: {k} has shape {np.asarray(weights[k]).shape}")


def random_model(blocks: int = 6, channels: int = 64, head_channels: int = 32,
                 value_fc: int = 64, planes: int = NUM_PLANES, seed: int = 0) -> Weights:
    """An *unfolded* weight dictionary with random convs and random BN parameters and running
    statistics (non-trivial, so that folding is really exercised). Activations stay O(1) through
    the tower. For tests and benchmarks; pass it through :func:`fold_batchnorm` before export."""
    arch = Arch(blocks, channels, head_channels, value_fc, planes)
    rng = np.random.default_rng(seed)
    w: Weights = {}
    for name, cin, cout, k in arch.bn_convs():
        std = np.sqrt(2.0 / (cin * k * k))
        if name.endswith("conv2"):
            std *= 0.5  # keep the residual stream from growing block after block
        w[f"{name}.w"] = rng.normal(0.0, std, (cout, cin, k, k)).astype(np.float32)
        w[f"{name}.bn.gamma"] = rng.uniform(0.5, 1.5, cout).astype(np.float32)
        w[f"{name}.bn.beta"] = rng.normal(0.0, 0.1, cout).astype(np.float32)
        w[f"{name}.bn.mean"] = rng.normal(0.0, 0.2, cout).astype(np.float32)
        w[f"{name}.bn.var"] = rng.uniform(0.5, 2.0, cout).astype(np.float32)
    for name, shape in arch.plain_layers().items():
        fan_in = int(np.prod(shape[1:]))
        scale = 0.15 if name == "value.fc2" else 1.0  # keep tanh out of saturation
        w[f"{name}.w"] = rng.normal(0.0, scale * np.sqrt(1.0 / fan_in), shape).astype(np.float32)
        w[f"{name}.b"] = rng.normal(0.0, 0.1, shape[0]).astype(np.float32)
    return w


def fold_batchnorm(weights: Mapping[str, np.ndarray], eps: float = BN_EPS) -> Weights:
    """Fold every ``<layer>.bn.*`` into the preceding conv: ``w' = w * s``, ``b' = beta + (b -
    mean) * s`` with ``s = gamma / sqrt(var + eps)`` (computed in float64, stored float32).

    Keys without BN pass through unchanged; the result is checked against the architecture."""
    arch = infer_arch(weights, "fold_batchnorm")
    check_weights(weights, arch, folded=False, source="fold_batchnorm")
    out: Weights = {}
    for name, _cin, cout, _k in arch.bn_convs():
        g, beta, mean, var = (np.asarray(weights[f"{name}.bn.{p}"], np.float64) for p in BN_PARAMS)
        s = g / np.sqrt(var + eps)
        w = np.asarray(weights[f"{name}.w"], np.float64)
        b = np.asarray(weights.get(f"{name}.b", np.zeros(cout)), np.float64)
        out[f"{name}.w"] = (w * s[:, None, None, None]).astype(np.float32)
        out[f"{name}.b"] = (beta + (b - mean) * s).astype(np.float32)
    for name in arch.plain_layers():
        for p in ("w", "b"):
            out[f"{name}.{p}"] = np.asarray(weights[f"{name}.{p}"], np.float32).copy()
    return out
