"""The search side of ``gomoku serve``, free of any web framework: the shared evaluators
(:class:`Engine`), the answers of ``/move`` and ``/analyze`` and the bounded search pool.

Every stateless request gets its own :class:`~gomoku_ai.player.Player` (its own tree, seed 0: the
same request gets the same answer); a browser game (:mod:`tools.serve.games`) keeps one Player, and
so its tree, per game. The evaluator and its network are loaded once and shared read-only.
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from gomoku_ai import ENGINE_NAME, __version__, movegen, tactics
from gomoku_ai.board import Board
from gomoku_ai.evaluator import Evaluator
from gomoku_ai.mcts import MCTSConfig
from gomoku_ai.net.model import masked_softmax
from gomoku_ai.player import Limit, Player, SearchInfo, Source
from gomoku_ai.rules import Rule

from .request import Limits, color_name, illegal

log = logging.getLogger("gomoku.serve")

#: Below this search time (ms) ``/move`` runs no search: the search's first batch of simulations
#: (16 network evaluations after the root's) took 5 to 15 ms on the development machine, so a
#: shorter search visits nothing and would answer the first square of the root. The answer is
#: then :func:`_instant`'s (a tactic, else the policy's best legal move).
MIN_SEARCH_MS = 10.0
#: The attacker nodes of the VCF check of an instant answer (a few ms at most; deterministic)
INSTANT_VCF_NODES = 500
#: ``source`` of an answer chosen by the network's prior alone (no search)
SOURCE_POLICY = Source.POLICY


def _model_info(ev: Evaluator) -> Dict[str, Any]:
    net = getattr(ev, "network", None)
    if net is not None:
        cfg = getattr(net, "config", {}) or {}
        return {"name": str(cfg.get("name", getattr(net, "name", "?"))),
                "version": str(cfg.get("version", "?")),
                "sha256": dict(cfg.get("sha256") or {}) or None,
                "backend": getattr(net, "backend", None)}
    return {"name": getattr(ev, "name", type(ev).__name__), "version": __version__,
            "sha256": None, "backend": None}


def _sq(board: Board, m: int) -> Dict[str, Any]:
    x, y = board.xy(m)
    return {"x": x, "y": y, "move": board.move_name(m)}


class Engine:
    """The shared, read-only part: one evaluator per rule. Each call builds its own Player."""

    def __init__(self, evaluators: Mapping[Rule, Evaluator], max_visits: int = 5000,
                 max_time_ms: float = 10000.0,
                 sized: Optional[Callable[[Rule, int, int], Evaluator]] = None) -> None:
        """``evaluators``: one per rule (freestyle required). ``sized(rule, width, height)``, when
        given, picks the evaluator per rule *and board size* instead (the shipped models'
        ``RULE@WxH`` index keys); its answers are cached per (rule, width, height)."""
        if Rule.FREESTYLE not in evaluators:
            raise ValueError("the engine needs at least a freestyle evaluator")
        self.evaluators = {r: evaluators.get(r, evaluators[Rule.FREESTYLE]) for r in Rule}
        self.models = {r: _model_info(ev) for r, ev in self.evaluators.items()}
        self.max_visits = max_visits
        self.max_time_ms = max_time_ms
        self._sized = sized
        self._by_size: Dict[Tuple[Rule, int, int], Tuple[Evaluator, Dict[str, Any]]] = {}
        self._size_lock = threading.Lock()

    def _pick(self, rule: Rule, width: int, height: int) -> Tuple[Evaluator, Dict[str, Any]]:
        if self._sized is None:
            return self.evaluators[rule], self.models[rule]
        key = (rule, width, height)
        with self._size_lock:
            got = self._by_size.get(key)
            if got is None:
                ev = self._sized(rule, width, height)
                got = self._by_size[key] = (ev, _model_info(ev))
        return got

    @classmethod
    def load(cls, model: Optional[str] = None, max_visits: int = 5000,
             max_time_ms: float = 10000.0) -> "Engine":
        """The shipped model per rule (``models/index.json``), or ``model`` for every rule."""
        from gomoku_ai.shipped import load_evaluator
        if model is not None:
            ev = load_evaluator(model)
            evs = {r: ev for r in Rule}
        else:
            evs = {r: load_evaluator(None, r) for r in Rule}  # networks are cached per file
            return cls(evs, max_visits, max_time_ms,
                       sized=lambda r, w, h: load_evaluator(None, r, width=w, height=h))
        return cls(evs, max_visits, max_time_ms)

    def model_tag(self, rule: Rule, width: int = 15, height: Optional[int] = None) -> str:
        m = self._pick(rule, width, width if height is None else height)[1]
        return f"{m['name']}@{m['version']}"

    def new_player(self, board: Board, reuse_tree: bool = False) -> Player:
        """A Player on the evaluator for ``board``'s rule and size, its tree bounded to the
        server's ``max_visits`` (+ 64, at least 2,000 nodes)."""
        ev = self._pick(board.rule, board.width, board.height)[0]
        cfg = MCTSConfig(max_nodes=max(2000, self.max_visits + 64))
        return Player(ev, config=cfg, seed=0, name=ENGINE_NAME, reuse_tree=reuse_tree)

    def move(self, board: Board, limits: Limits, top: int, player: Optional[Player] = None,
             stop: Optional[threading.Event] = None) -> Dict[str, Any]:
        """The answer to ``POST /move``: a search within ``limits``, or (under
        :data:`MIN_SEARCH_MS`, or when the search visited nothing) the instant answer. The
        search runs on ``player`` (a game's own, keeping its tree) or on a new one; ``stop`` set
        (the request was given up) ends it early, once its root is expanded."""
        ev, model = self._pick(board.rule, board.width, board.height)
        if player is None:
            player = self.new_player(board)
        if limits.time_ms < MIN_SEARCH_MS:
            info = _instant(player, board)
        else:
            # soft == hard: the search (tactics included) ends by time_ms, or when the request is
            # given up (``stop``; the search still expands its root, so there is always a move)
            info = player.think(board, Limit(soft_ms=limits.time_ms, hard_ms=limits.time_ms,
                                             visits=limits.visits), stop=stop)
            if info.source == "mcts" and info.root_visits == 0 and not info.proven:
                # out of time before the first visit: every root move is equally unexplored
                searched_ms = info.elapsed_ms
                info = _instant(player, board)
                info.elapsed_ms += searched_ms
        move = info.move
        cands = []
        if info.source == "mcts" and info.candidates:
            total = float(info.root_visits) or 1.0
            for m, n, q, p in info.candidates[:max(top, 1) + 8]:
                if movegen.is_forbidden(board, m):
                    continue
                cands.append({**_sq(board, m), "probability": round(n / total, 4), "visits": n,
                              "q": round(q, 4), "prior": round(p, 4)})
        if movegen.is_forbidden(board, move):   # never expected: Player filters
            log.error("search proposed the forbidden point %s; replaced", board.move_name(move))
            if not cands:
                raise RuntimeError("no legal candidate besides a forbidden point")
            move = board.index(cands[0]["x"], cands[0]["y"])
            info.pv = [move]
        prior = None
        if info.source == SOURCE_POLICY:   # the network's view of the move it chose
            probs, info.value, _ = _policy(ev, board)
            prior = round(float(probs[move]), 4)
        if not cands:
            cands = [{**_sq(board, move), "probability": 1.0, "visits": info.visits,
                      "q": round(info.value, 4), "prior": prior}]
        else:   # the answer first (ties in visits are broken by Q in the search, not here)
            cands.sort(key=lambda c: (c["x"], c["y"]) != board.xy(move))
        pv = info.pv if info.pv and info.pv[0] == move else [move]
        return {**_sq(board, move), "value": round(float(info.value), 4),
                "winrate": round(float(info.winrate), 4), "source": info.source,
                "proven": info.proven, "candidates": cands[:top], "pv": _pv(board, pv),
                "visits": info.visits, "elapsed_ms": round(info.elapsed_ms, 1),
                "limits": limits.as_dict(), "side_to_move": color_name(board.side_to_move),
                "rule": board.rule.value, "model": model, "engine_version": __version__}

    def analyze(self, board: Board, top: int) -> Dict[str, Any]:
        ev, info = self._pick(board.rule, board.width, board.height)
        probs, value, legal = _policy(ev, board)
        order = np.argsort(-probs, kind="stable")[:top]
        return {"policy": np.round(probs, 5).reshape(board.height, board.width).tolist(),
                "value": round(value, 4), "winrate": round((value + 1) / 2, 4),
                "top": [{**_sq(board, int(m)), "probability": round(float(probs[m]), 4)}
                        for m in order if legal[m]],
                "forbidden": [board.move_name(m) for m in movegen.forbidden_points(board)],
                "side_to_move": color_name(board.side_to_move), "rule": board.rule.value,
                "width": board.width, "height": board.height, "model": info,
                "engine_version": __version__}


def _policy(ev: Evaluator, board: Board) -> Tuple[np.ndarray, float, np.ndarray]:
    """The evaluator's prior over the legal squares (flat, renju-forbidden points at 0, summing to
    1), its value in [-1, 1] for the side to move and the legal mask (flat bools). Raises a 422
    when nothing is legal."""
    logits, values = ev.evaluate([ev.prepare(board)], (board.height, board.width))
    legal = movegen.legal_mask(board)
    if not legal.any():
        raise illegal("no_legal_move", "the side to move has no legal move")
    probs = masked_softmax(np.asarray(logits[0]).reshape(1, -1), legal[None], np.float64)[0]
    return probs, float(values[0]), legal


def _instant(player: Player, board: Board) -> SearchInfo:
    """The answer that needs no tree: the Player's answer-at-once (a five, the block of the
    opponent's only five, a lost position's move, else the evaluator's best prior among the legal
    moves near the stones), except that a VCF found within :data:`INSTANT_VCF_NODES` attacker
    nodes comes before the prior. The prior's answer is reported as :data:`SOURCE_POLICY`;
    ``elapsed_ms`` is the wall time of this call."""
    t0 = time.perf_counter()
    info = player.think(board, Limit(soft_ms=0.0, hard_ms=0.0))   # no visits: Player's "instant"
    if info.source == "static":
        line = tactics.find_vcf(board, node_limit=INSTANT_VCF_NODES)
        if line:
            info = SearchInfo(move=line[0], value=1.0, pv=list(line), proven=1, source=Source.VCF,
                              depth=len(line))
        else:
            # "policy" is this service's own kind, not a gomoku_ai Source member (a str either way in JSON)
            info.source = SOURCE_POLICY
    info.elapsed_ms = (time.perf_counter() - t0) * 1000.0
    return info


def _pv(board: Board, pv: Sequence[int]) -> List[Dict[str, Any]]:
    out, b, seen = [], board.copy(), set()
    for m in pv:
        if m in seen or not b.is_empty(m):
            break
        seen.add(m)
        out.append(_sq(b, m))
    return out


# --------------------------------------------------------------------------------------- pool
class Busy(Exception):
    """No room: answered with 503."""


class WorkerPool:
    """``workers`` threads; at most ``workers + queue`` requests admitted (running or waiting)."""

    def __init__(self, workers: int, queue: int, queue_timeout_s: float) -> None:
        self.capacity = workers + queue
        self.queue_timeout_s = queue_timeout_s
        self._exec = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="serve-worker")
        self._slots = threading.BoundedSemaphore(self.capacity)
        self._lock = threading.Lock()
        self.in_flight = 0

    def submit(self, fn: Callable[[], Any], cancelled: threading.Event) -> "Future[Any]":
        if not self._slots.acquire(blocking=False):
            raise Busy(f"all {self.capacity} request slots are taken")
        with self._lock:
            self.in_flight += 1
        try:
            fut = self._exec.submit(self._run, fn, cancelled, time.monotonic())
        except RuntimeError:   # shutting down
            self._release(None)
            raise Busy("the server is shutting down") from None
        fut.add_done_callback(self._release)
        return fut

    def _release(self, _fut: Any) -> None:
        with self._lock:
            self.in_flight -= 1
        self._slots.release()

    def _run(self, fn: Callable[[], Any], cancelled: threading.Event, t_enq: float) -> Any:
        if cancelled.is_set():
            raise Busy("the request was abandoned")
        if time.monotonic() - t_enq > self.queue_timeout_s:
            raise Busy(f"the request waited over {self.queue_timeout_s:g} s in the queue")
        return fn()

    def shutdown(self) -> None:
        self._exec.shutdown(wait=False, cancel_futures=True)
