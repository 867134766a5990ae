"""``gomoku bench``: speed figures as JSON, plus a deterministic search signature.

The signature (as in Stockfish's ``bench``) is a hash of node counts and chosen moves over a fixed set
of positions searched to a fixed visit count: same code, same signature. A change meant to keep the
search's behaviour must leave it unchanged. ``PYGOMOKU_MCTS`` (``MCTSConfig`` fields, as for the engine)
changes the searches' parameters, e.g. ``PYGOMOKU_MCTS=leaf_vcf_nodes=0`` to compare with a search
without the leaf VCF; the JSON then names them (``mcts_overrides``).
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional

if TYPE_CHECKING:  # imported lazily at run time
    from gomoku_ai.evaluator import Evaluator, PolicyValueNetwork
    from gomoku_ai.net import Network
    from gomoku_ai.player import Player

BENCH_POSITIONS = [
    # (rule, moves in h8 notation) — openings and middle games on 15x15
    ("freestyle", "h8"),
    ("freestyle", "h8 i9 g9 i7"),
    ("freestyle", "h8 h9 i8 g8 i9 i7 j10 k11 j7 j8"),
    ("freestyle", "h8 i9 j8 i8 i7 h6 j9 j7 k9 l10 k8 l8 k10 k11"),
    ("standard", "h8 i9 g9 i7 i8 g10 j7"),
    ("renju", "h8 i9 g9 i7 i8 g10 j7 h10 f10"),
]


def player_visits_per_s(player: "Player", ms: float) -> float:
    """Visits per second of ``player`` on the :data:`BENCH_POSITIONS`, ``ms`` milliseconds each from a fresh
    tree, root tactics off (only the search is timed; the player's VCF/VCT switches are left off after)."""
    from gomoku_ai.board import Board
    from gomoku_ai.player import Limit
    from gomoku_ai.rules import Rule
    player.use_vcf = player.use_vct = False
    visits = elapsed = 0.0
    for rule, line in BENCH_POSITIONS:
        b = Board(15, rule=Rule.parse(rule))
        for tok in line.split():
            b.play(b.parse(tok))
        player.new_game()
        info = player.think(b, Limit(soft_ms=ms, hard_ms=ms + 100))
        visits += info.visits
        elapsed += info.elapsed_ms
    return visits / elapsed * 1000.0


def bench_board(games: int = 200, seed: int = 1) -> Dict[str, Any]:
    """(push + win check + pop) cycles per second along random 15x15 games (one core)."""
    from gomoku_ai.board import Board
    rng = random.Random(seed)
    b = Board(15)
    seqs = []
    for _ in range(games):
        order = list(range(225))
        rng.shuffle(order)
        seqs.append(order[:120])
    ops = 0
    t = time.perf_counter()
    for seq in seqs:
        depth = 0
        for m in seq:
            # a search-like pattern: try the move, undo it, then keep it
            won = b.push(m)
            b.pop()
            ops += 1
            b.push(m)
            depth += 1
            if won:
                break
        for _ in range(depth):
            b.pop()
    dt = time.perf_counter() - t
    return {"push_win_pop_per_s": round(ops / dt), "ops": ops, "seconds": round(dt, 3)}


def _random_network(blocks: int, channels: int, backend: str) -> Network:
    """A random-weight network of the given tower, exported to a temp folder (for speed only)."""
    import tempfile
    from gomoku_ai.net import fold_batchnorm, load_model, random_model
    from gomoku_ai.net.model import export_model
    tmp = tempfile.mkdtemp(prefix="gomoku-bench-")
    w = fold_batchnorm(random_model(blocks=blocks, channels=channels,
                                    head_channels=max(16, channels // 2), seed=1))
    base = export_model(w, {"name": f"random-{blocks}x{channels}"}, f"{tmp}/net",
                        with_onnx=(backend != "numpy"))
    return load_model(base, backend=backend)


def bare_network_rate(net: PolicyValueNetwork, batch: int, seconds: float = 2.0) -> float:
    """Evaluations per second of ``net.forward`` alone on 15x15 positions at ``batch``."""
    import numpy as np
    from gomoku_ai.board import Board
    from gomoku_ai.net import encode_batch
    rng = random.Random(5)
    boards = []
    for _ in range(batch):
        b = Board(15)
        for m in rng.sample(range(225), 20):
            b.push(m)
        boards.append(b)
    x = np.ascontiguousarray(encode_batch(boards))
    net.forward(x)
    n = 0
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        net.forward(x)
        n += batch
    return n / (time.perf_counter() - t)


def bench_search(evaluator_name: str, visits: int, model: str | None = None,
                 network: Optional[PolicyValueNetwork] = None, batch: int = 1) -> Dict[str, Any]:
    """Search each bench position to ``visits`` simulations from a fresh tree (``network``, else the model at
    path ``model``, for the ``network`` evaluator)."""
    from gomoku_ai.board import Board
    from gomoku_ai.evaluator import HeuristicEvaluator, RolloutEvaluator, UniformEvaluator
    from gomoku_ai.mcts import MCTS, MCTSConfig, with_overrides
    from gomoku_ai.rules import Rule
    overrides = os.environ.get("PYGOMOKU_MCTS", "")
    cfg = with_overrides(MCTSConfig(), overrides)    # a bad field is refused before any search
    ev: Evaluator
    if evaluator_name == "uniform":
        ev = UniformEvaluator()
    elif evaluator_name == "rollout":
        ev = RolloutEvaluator(seed=1)
    elif evaluator_name == "heuristic":
        ev = HeuristicEvaluator()
    else:
        from gomoku_ai.evaluator import NetworkEvaluator
        from gomoku_ai.net import load_model
        if network is None:
            if model is None:
                raise ValueError(f"bench_search({evaluator_name!r}) needs a network or a model path")
            network = load_model(model)
        ev = NetworkEvaluator(network, batch_size=batch)
    sims = evals = hits = 0
    total_s = eval_s = 0.0
    sig = hashlib.sha256()
    for rule, line in BENCH_POSITIONS:
        b = Board(15, rule=Rule.parse(rule))
        for tok in line.split():
            b.play(b.parse(tok))
        m = MCTS(ev, cfg, seed=1)    # the search reads its config, never changes it
        st = m.search(b, visits=visits)
        sims += st.simulations
        evals += st.evaluations
        hits += st.cache_hits
        total_s += st.elapsed_s
        eval_s += st.eval_s
        sig.update(f"{st.simulations},{st.new_nodes},{st.max_depth},{m.best_move()};".encode())
    outside = (total_s - eval_s) / max(sims, 1)
    return {
        "evaluator": evaluator_name, "visits_per_position": visits, "positions": len(BENCH_POSITIONS),
        **({"mcts_overrides": overrides} if overrides.strip() else {}),
        "simulations": sims, "simulations_per_s": round(sims / total_s, 1),
        "evaluations_per_s_inside_search": round(evals / eval_s, 1) if eval_s > 0 else None,
        "evaluations": evals, "cache_hits": hits,
        "us_per_simulation_outside_evaluator": round(outside * 1e6, 1),
        "signature": sig.hexdigest()[:16],
    }


#: the CPU features that choose onnxruntime's int8 kernels: with a VNNI extension the u8 x s8 products
#: are summed in 32 bits, without one (AVX2 only) in pairs saturated at 16 bits, so the int8 graph's
#: outputs, and the network signature, can differ between machines running the same code
INT8_FEATURES = ("avx2", "avx512_vnni", "avx_vnni", "amx_int8")


def cpu_info(cpuinfo: str = "/proc/cpuinfo") -> Optional[Dict[str, str]]:
    """The first processor's lines of ``cpuinfo`` (Linux) as {field: value}; None where it cannot be read."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return None
    fields: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:   # the first processor's lines
            fields[key.strip()] = value.strip()
    return fields


def cpu_description(cpuinfo: str = "/proc/cpuinfo") -> Dict[str, Any]:
    """The CPU's model name and which of :data:`INT8_FEATURES` it has (:func:`cpu_info`); the model is
    ``platform.processor()`` and the features None where ``cpuinfo`` cannot be read."""
    fields = cpu_info(cpuinfo)
    if fields is None:
        return {"model": platform.processor() or None, "int8_features": None}
    flags = set(fields.get("flags", "").split())
    return {"model": fields.get("model name") or platform.processor() or None,
            "int8_features": [f for f in INT8_FEATURES if f in flags]}


def _onnxruntime_version() -> Optional[str]:
    try:
        import onnxruntime
    except ImportError:
        return None
    return str(onnxruntime.__version__)


def run(args: Any) -> int:
    """Entry point of ``gomoku bench``; prints one JSON object."""
    from gomoku_ai import native
    out: Dict[str, Any] = {
        "python": platform.python_version(), "machine": platform.machine(), "cpu": cpu_description(),
        "onnxruntime": _onnxruntime_version(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"), "vcf_prover": native.status(),
    }
    parts: List[str] = args.only.split(",") if args.only else ["board", "search", "network"]
    if "board" in parts:
        out["board"] = bench_board()
    if "search" in parts:
        out["search"] = [bench_search(name, args.visits)
                         for name in ("uniform", "heuristic", "rollout")]
        model = args.model
        if model is None:            # the shipped default network (freestyle 15x15)
            from gomoku_ai.rules import Rule
            from gomoku_ai.shipped import default_model
            model = default_model(Rule.FREESTYLE, 15, 15)
        if model and str(model).lower() != "none":
            from gomoku_ai.net import load_model
            from gomoku_ai.shipped import env_backend
            net = load_model(str(model), backend=env_backend())   # PYGOMOKU_NET_BACKEND=onnx: the float graph
            r = bench_search("network", args.visits, network=net)
            r["network"] = Path(str(model)).name
            r["backend"] = str(net.backend)
            r["bare_network_evals_per_s"] = round(bare_network_rate(net, 1), 1)
            out["search"].append(r)
    if "network" in parts:
        nets = []
        for blocks, channels in ((6, 64), (4, 32)):
            for backend in ("onnx", "numpy"):
                net = _random_network(blocks, channels, backend)
                for batch in (1, 8):
                    r = bench_search("network", max(100, args.visits // 4), network=net,
                                     batch=batch)
                    bare = bare_network_rate(net, batch)
                    r.update({"network": f"random {blocks}x{channels}", "backend": backend,
                              "batch": batch, "bare_network_evals_per_s": round(bare, 1),
                              "search_efficiency": round(r["simulations_per_s"] / bare, 3)})
                    nets.append(r)
        out["network_search"] = nets
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
