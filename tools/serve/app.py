"""``gomoku serve``: a small HTTP move service (standard library only: ``http.server``).

    gomoku serve [--host 127.0.0.1] [--port 8080] [--workers 2] [--queue 16]
                 [--max-visits 5000] [--max-time-ms 10000] [--model PATH] [--log-file FILE]

Endpoints (JSON in, JSON out, ``Content-Type: application/json``):

``GET /health`` (``HEAD /health``: the same status and headers, no body)
    ``{"status": "ok", "engine": "pygomoku", "engine_version": ..., "model": {"name", "version",
    "sha256": {"npz", "onnx"}, "backend"}, "models": {rule: model}, "limits": {...}, "busy": n}``.

``POST /move``
    A position and limits; answers the move. Body keys (unknown keys are refused):

    * ``board``: a 2-D list ``board[y][x]`` (top row first) of 0 empty / 1 black / 2 white, **or**
      ``moves``: the moves played so far, Black first, each ``"h8"`` (column letter, row counted
      from the top, 1-based: ``h8`` is x 7, y 7), ``"7,7"`` (0-based x,y) or ``[7, 7]``;
    * ``size``: board size for ``moves`` (an integer, or ``[width, height]``; default 15);
      sides are 5 to 32 (columns past ``z`` are named ``"x,y"`` in answers);
    * ``side_to_move``: ``"black"``/``"white"`` (or 1/2). With ``board`` it is optional: Black when
      both colours have as many stones, White when Black has one more. Given explicitly it must
      agree with the counts: **Black to move requires #black == #white, White to move requires
      #black == #white + 1**; any other count is refused (422 ``stone_count``). With ``moves`` it
      follows from the number of moves and, if given, must agree (422);
    * ``rule``: ``freestyle`` (default), ``standard``, ``renju``, ``caro``, or a Gomocup
      ``INFO rule`` code (an integer >= 0 such as ``4``, or the same as a string, ``"4"``);
    * ``visits`` (integer >= 1) and/or ``time_ms`` (number > 0): the search stops at the first
      reached. Values over the server's ``--max-visits`` / ``--max-time-ms`` are clamped (the answer
      lists them in ``limits.clamped``); neither given: 800 visits (clamped). The search never runs
      longer than ``--max-time-ms`` nor beyond ``--max-visits``. Under ``MIN_SEARCH_MS`` (10 ms)
      there is no search: the answer is a tactic (a five, the block of a five, a VCF found at once)
      or else the policy's best legal move (``source`` ``policy``, ``visits`` 0); so is the
      answer of a search that ran out of time before its first visit;
    * ``top``: how many candidate moves to list (0..25, default 5).

    Answer: ``x``, ``y``, ``move`` (``"h8"``), ``value`` (-1..1 for the side to move), ``winrate``,
    ``source`` (``mcts``; the tactic that decided: ``win1``, ``block5``, ``vcf``, ``vct``,
    ``lost``; or ``policy``: the network's best prior, no search),
    ``candidates`` (``[{x, y, move, probability, visits, q, prior}]``, probability = share of the
    root visits; a tactical or policy answer lists its move alone with probability 1, a policy
    answer with its prior), ``pv`` (principal
    variation, ``[{x, y, move}]``), ``visits``, ``elapsed_ms``, ``limits``, ``side_to_move``,
    ``rule``, ``model``. Under renju a forbidden point is never answered for Black.

``POST /analyze``
    The same position keys (no limits); answers the network's prior as a heatmap ``policy[y][x]``
    (probabilities over the legal squares, renju-forbidden points at 0, summing to 1), ``value`` and
    ``winrate`` for the side to move, ``top`` candidates by prior and ``forbidden`` (renju points).

Errors are JSON ``{"error": code, "message": text, "status": n}``, never a 500 for bad input:

* 400: malformed JSON, a body that is not an object, an unknown key, wrong types or shapes, cells
  other than 0/1/2, an unreadable move, a bad rule/side/size/top, negative or non-numeric limits;
* 404 unknown path; 405 wrong method (with ``Allow``; a GET path allows HEAD too); 408 body not
  received in time;
  411 no Content-Length (chunked bodies are not accepted); 413 body over 64 KiB;
  415 Content-Type not ``application/json`` (charset, if given, must be UTF-8);
* 422: a well-formed but unplayable position: impossible stone counts, a game already won (a five,
  or a renju black overline), a full board, an occupied / off-board move or a move after the win in
  ``moves``, a renju-forbidden black move in ``moves``, a contradicting ``side_to_move``, no legal
  move;
* 503 (with ``Retry-After``): all workers busy and the queue full, too many open connections, or a
  request that waited too long in the queue.

Every request gets its own :class:`~gomoku_ai.player.Player` (its own tree, seed 0: the same request
gets the same answer); the evaluator and its network are loaded once and shared read-only. Searches
run on ``--workers`` threads with at most ``--queue`` more requests waiting. Each request is logged
(one line: method, path, status, time, client, model name@version and a summary of the request and
answer) to stderr, or to ``--log-file``. There is no authentication: bind to loopback (the default)
or put a proxy in front.
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import signal
import socket
import sys
import threading
import time
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from gomoku_ai import ENGINE_NAME, __version__, movegen, tactics
from gomoku_ai.board import Board
from gomoku_ai.evaluator import Evaluator
from gomoku_ai.net.model import masked_softmax
from gomoku_ai.mcts import MCTSConfig
from gomoku_ai.player import Limit, NoMoveError, Player, SearchInfo, Source
from gomoku_ai.rules import Rule

from .request import (ANALYZE_KEYS, MOVE_KEYS, Limits, Position, RequestError,
                                 color_name, illegal, parse_limits, parse_position, parse_top)

MAX_BODY_BYTES = 64 * 1024
DESCRIPTION = ("A small HTTP move service, JSON in and out, without authentication (it binds to "
               "loopback by default). GET (or HEAD) /health: the engine, its models and limits. "
               "POST /move: a position (\"moves\": [\"h8\", \"i9\"], or \"board\": rows of "
               "0/1/2, top row first) with optional \"rule\" (a name or a Gomocup code), "
               "\"side_to_move\", \"size\", \"visits\", \"time_ms\" and \"top\" -> the move, "
               "its value and the candidates. POST /analyze: the network's policy and value for "
               "a position.")
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


@dataclass
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 2
    queue: int = 16
    max_visits: int = 5000
    max_time_ms: float = 10000.0
    max_body_bytes: int = MAX_BODY_BYTES
    queue_timeout_s: float = 30.0      # a request still queued after this gets 503
    io_timeout_s: float = 15.0         # socket timeout: slow bodies (408) and idle keep-alive
    max_connections: int = 0           # open connections; 0: 4 * (workers + queue) + 16


# ------------------------------------------------------------------------------------- engine
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

    def move(self, board: Board, limits: Limits, top: int) -> Dict[str, Any]:
        """The answer to ``POST /move``: a search within ``limits``, or (under
        :data:`MIN_SEARCH_MS`, or when the search visited nothing) the instant answer."""
        ev, model = self._pick(board.rule, board.width, board.height)
        cfg = MCTSConfig(max_nodes=max(2000, self.max_visits + 64))
        player = Player(ev, config=cfg, seed=0, name=ENGINE_NAME, reuse_tree=False)
        if limits.time_ms < MIN_SEARCH_MS:
            info = _instant(player, board)
        else:
            # soft == hard: the search (tactics included) ends by time_ms; never a ``stop`` event
            # (stopping before the tree's first simulation would leave no move).
            info = player.think(board, Limit(soft_ms=limits.time_ms, hard_ms=limits.time_ms,
                                             visits=limits.visits))
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


# --------------------------------------------------------------------------------------- http
#: what socketserver hands a server: a stream socket (TCP) or a datagram server's (data, socket)
_Request = Union[socket.socket, Tuple[bytes, socket.socket]]


class MoveServer(ThreadingHTTPServer):
    """ThreadingHTTPServer (one thread per connection, capped) + the search pool."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128   # listen backlog (socketserver's 5 resets bursts of connections)

    def __init__(self, cfg: ServeConfig, engine: Engine) -> None:
        self.cfg = cfg
        self.engine = engine
        self.pool = WorkerPool(cfg.workers, cfg.queue, cfg.queue_timeout_s)
        n = cfg.max_connections or 4 * (cfg.workers + cfg.queue) + 16
        self._conns = threading.BoundedSemaphore(n)
        self._ids = itertools.count(1)
        super().__init__((cfg.host, cfg.port), Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def next_id(self) -> int:
        return next(self._ids)

    def process_request(self, request: _Request, client_address: Tuple[Any, ...]) -> None:
        if not self._conns.acquire(blocking=False):
            log.warning("503 too many connections; refused %s", client_address[0])
            try:
                sock = request if isinstance(request, socket.socket) else request[1]  # TCP: the socket itself
                sock.settimeout(1.0)
                body = json.dumps({"error": "busy", "message": "too many open connections",
                                   "status": 503}).encode()
                sock.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                             b"application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._conns.release()
            raise

    def process_request_thread(self, request: _Request, client_address: Tuple[Any, ...]) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._conns.release()

    def handle_error(self, request: _Request, client_address: Tuple[Any, ...]) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):   # client went away, reset, timeout
            log.debug("connection error from %s: %r", client_address[0], exc)
        else:
            log.exception("unexpected error with %s", client_address[0])

    def server_close(self) -> None:
        super().server_close()
        self.pool.shutdown()


_ROUTES: Dict[str, Tuple[str, str]] = {
    "/health": ("GET", "_health"),
    "/move": ("POST", "_move"),
    "/analyze": ("POST", "_analyze"),
}


def _allowed(method: str) -> Tuple[str, ...]:
    """The methods a route of ``method`` answers: a GET route answers HEAD too (the same status
    and headers, no body: :meth:`Handler._send_json` writes none for HEAD)."""
    return (method, "HEAD") if method == "GET" else (method,)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = f"gomoku-serve/{__version__}"
    sys_version = ""
    disable_nagle_algorithm = True   # headers and body are two writes: avoid the 40 ms delayed ACK
    server: MoveServer
    _summary_req: Dict[str, Any]   # what the access log says of the request and the response (per request)
    _summary_resp: Dict[str, Any]

    def version_string(self) -> str:
        return self.server_version

    def setup(self) -> None:
        # typeshed declares StreamRequestHandler.timeout a ClassVar; setup() reads a per-connection value here
        self.timeout = self.server.cfg.io_timeout_s  # type: ignore[misc]
        super().setup()

    # every method, known or not, lands in _dispatch (404 / 405 rather than 501)
    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
        log.debug("%s %s", self.address_string(), format % args)

    # ------------------------------------------------------------------ responses
    def _send_json(self, status: int, payload: Dict[str, Any], close: bool = False,
                   headers: Optional[Dict[str, str]] = None) -> None:
        body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        rid = getattr(self, "_rid", None)
        if rid is not None:
            self.send_header("X-Request-Id", str(rid))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: Optional[str] = None,
                   explain: Optional[str] = None) -> None:
        """Protocol-level errors of http.server (bad request line, header too large...) as JSON."""
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "error"
        self._send_json(code, {"error": phrase.lower().replace(" ", "_"),
                               "message": message or phrase, "status": code}, close=True)
        log.info("%s %s %d client=%s (%s)", self.command or "-", getattr(self, "path", "-"),
                 code, self.client_address[0], message or phrase)

    def _error(self, err: RequestError, close: bool = False,
               headers: Optional[Dict[str, str]] = None) -> None:
        self._summary_resp = {"error": err.code}
        self._send_json(err.status, err.payload(), close=close, headers=headers)

    # ------------------------------------------------------------------ dispatch
    def _dispatch(self) -> None:
        t0 = time.perf_counter()
        self._rid = self.server.next_id()
        self._status = 0
        self._summary_req = {}
        self._summary_resp = {}
        self._model = "-"
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        try:
            route = _ROUTES.get(path)
            if route is None:
                self._discard_body()
                self._error(RequestError(404, "not_found", f"no such path {path!r}; try "
                                         "GET /health, POST /move or POST /analyze"))
            elif self.command not in _allowed(route[0]):
                allow = ", ".join(_allowed(route[0]))
                self._discard_body()
                self._error(RequestError(405, "method_not_allowed",
                                         f"{path} accepts {allow} only, not {self.command}"),
                            headers={"Allow": allow})
            else:
                getattr(self, route[1])()
        except RequestError as e:
            self._error(e, close=e.status in (408, 411, 413),
                        headers={"Retry-After": "1"} if e.status == 503 else None)
        except OSError:
            self.close_connection = True
            raise
        except Exception:
            log.exception("#%d unexpected error", self._rid)
            if not self._status:
                self._error(RequestError(500, "internal_error", "unexpected server error; it is "
                                                                "logged"), close=True)
        finally:
            ms = (time.perf_counter() - t0) * 1000.0
            log.info("#%d %s %s %d %.1fms client=%s model=%s req=%s resp=%s", self._rid,
                     self.command, path[:100], self._status, ms, self.client_address[0],
                     self._model, json.dumps(self._summary_req, separators=(",", ":")),
                     json.dumps(self._summary_resp, separators=(",", ":")))

    def _discard_body(self) -> None:
        """Consume a small body so that a kept-alive connection stays in step (else close)."""
        cl = self.headers.get("Content-Length")
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True
            return
        try:
            n = int(cl) if cl is not None else 0
        except ValueError:
            n = -1
        if 0 < n <= self.server.cfg.max_body_bytes:
            try:
                self.rfile.read(n)
            except OSError:
                self.close_connection = True
        elif n != 0:
            self.close_connection = True

    def _read_json(self) -> Any:
        if self.headers.get("Transfer-Encoding"):
            raise RequestError(411, "length_required", "send the body with a Content-Length "
                               "(chunked transfer encoding is not accepted)")
        cl = self.headers.get("Content-Length")
        if cl is None:
            raise RequestError(411, "length_required", "a Content-Length header is required")
        try:
            n = int(cl.strip())
        except ValueError:
            n = -1
        if n < 0:
            self.close_connection = True
            raise RequestError(400, "bad_content_length", f"bad Content-Length {cl[:40]!r}")
        limit = self.server.cfg.max_body_bytes
        if n > limit:
            raise RequestError(413, "body_too_large", f"the body has {n} bytes; the limit is "
                                                      f"{limit}")
        try:
            raw = self.rfile.read(n)
        except TimeoutError:
            raise RequestError(408, "timeout", "the body did not arrive in time") from None
        if len(raw) != n:
            raise RequestError(400, "short_body", f"the body ended after {len(raw)} of {n} bytes")
        ctype = self.headers.get("Content-Type", "")
        parts = [p.strip().lower() for p in ctype.split(";")]
        if parts[0] != "application/json":
            raise RequestError(415, "unsupported_media_type", "Content-Type must be "
                               f"application/json, not {ctype[:60]!r}")
        for p in parts[1:]:
            if p.startswith("charset=") and p[8:].strip('"') not in ("utf-8", "utf8"):
                raise RequestError(415, "unsupported_media_type", "the body must be UTF-8")
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise RequestError(400, "bad_json", f"the body is not valid JSON ({e})"[:300]) from None

    def _run(self, fn: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
        cfg = self.server.cfg
        cancelled = threading.Event()
        try:
            fut = self.server.pool.submit(fn, cancelled)
        except Busy as e:
            raise _busy(str(e)) from None
        wait = cfg.queue_timeout_s + cfg.max_time_ms / 1000.0 + 10.0
        try:
            return fut.result(timeout=wait)
        except FutureTimeout:
            cancelled.set()
            raise _busy("the search did not finish in time") from None
        except CancelledError:
            raise _busy("the server is shutting down") from None
        except Busy as e:
            raise _busy(str(e)) from None
        except (RequestError, NoMoveError):
            raise
        except Exception:
            log.exception("#%d search failed", self._rid)
            raise RequestError(500, "internal_error", "the engine failed on this position; the "
                                                      "error is logged") from None

    # ------------------------------------------------------------------ endpoints
    def _health(self) -> None:
        self._discard_body()
        eng = self.server.engine
        cfg = self.server.cfg
        self._model = eng.model_tag(Rule.FREESTYLE)
        self._send_json(200, {
            "status": "ok", "engine": ENGINE_NAME, "engine_version": __version__,
            "model": eng.models[Rule.FREESTYLE],
            "models": {r.value: m for r, m in eng.models.items()},
            "limits": {"max_visits": cfg.max_visits, "max_time_ms": cfg.max_time_ms,
                       "workers": cfg.workers, "queue": cfg.queue,
                       "max_body_bytes": cfg.max_body_bytes},
            "busy": self.server.pool.in_flight})

    def _position(self, keys: frozenset) -> Tuple[Dict[str, Any], Position]:
        body = self._read_json()
        pos = parse_position(body, keys)
        self._summary_req = pos.summary()
        self._model = self.server.engine.model_tag(pos.board.rule, pos.board.width,
                                                   pos.board.height)
        return body, pos

    def _move(self) -> None:
        cfg = self.server.cfg
        body, pos = self._position(MOVE_KEYS)
        limits = parse_limits(body, cfg.max_visits, cfg.max_time_ms)
        top = parse_top(body)
        self._summary_req.update(visits=limits.visits, time_ms=limits.time_ms)
        eng = self.server.engine
        try:
            out = self._run(lambda: eng.move(pos.board, limits, top))
        except NoMoveError as e:
            raise illegal("no_legal_move", str(e)) from None
        self._summary_resp = {"move": out["move"], "value": out["value"],
                              "visits": out["visits"], "source": out["source"],
                              "search_ms": out["elapsed_ms"]}
        self._send_json(200, out)

    def _analyze(self) -> None:
        body, pos = self._position(ANALYZE_KEYS)
        top = parse_top(body)
        eng = self.server.engine
        out = self._run(lambda: eng.analyze(pos.board, top))
        self._summary_resp = {"value": out["value"],
                              "top": out["top"][0]["move"] if out["top"] else None}
        self._send_json(200, out)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _busy(message: str) -> RequestError:
    return RequestError(503, "busy", message)


# ----------------------------------------------------------------------------------- lifecycle
def make_server(cfg: ServeConfig, engine: Optional[Engine] = None,
                model: Optional[str] = None) -> MoveServer:
    """A bound (not yet serving) server; ``engine`` defaults to the shipped model (or ``model``)."""
    if engine is None:
        engine = Engine.load(model, cfg.max_visits, cfg.max_time_ms)
    else:
        engine.max_visits, engine.max_time_ms = cfg.max_visits, cfg.max_time_ms
    return MoveServer(cfg, engine)


def start_background(cfg: ServeConfig, engine: Optional[Engine] = None,
                     model: Optional[str] = None) -> Tuple[MoveServer, threading.Thread]:
    """Serve on a daemon thread (tests, benchmarks).

    Stop with ``srv.shutdown(); srv.server_close()``."""
    srv = make_server(cfg, engine, model)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1},
                         name="serve-accept", daemon=True)
    t.start()
    return srv, t


def _positive_int(text: str) -> int:
    v = int(text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return v


def _nonneg_int(text: str) -> int:
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return v


def _positive_float(text: str) -> float:
    v = float(text)
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError("must be a number > 0")
    return v


def add_parser(sub: Any) -> None:
    """Register ``serve`` on a subparsers object."""
    p = sub.add_parser("serve", help="HTTP move service (POST /move, POST /analyze, GET /health)",
                       description=DESCRIPTION)
    _add_arguments(p)


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind; there is no authentication (default: %(default)s, "
                        "loopback)")
    p.add_argument("--port", type=int, default=8080,
                   help="port, 0: any free port (default: %(default)s)")
    p.add_argument("--workers", type=_positive_int, default=2,
                   help="searches run in parallel (default: %(default)s)")
    p.add_argument("--queue", type=_nonneg_int, default=16,
                   help="requests that may wait for a worker; beyond it: 503 (default: "
                        "%(default)s)")
    p.add_argument("--max-visits", type=_positive_int, default=5000,
                   help="cap on a request's visits (default: %(default)s)")
    p.add_argument("--max-time-ms", type=_positive_float, default=10000.0,
                   help="cap on a request's search time in ms (default: %(default)s)")
    p.add_argument("--model", default=None,
                   help="model (.json/basename) or 'heuristic' (default: the shipped models)")
    p.add_argument("--log-file", default=None, help="append the request log here (default stderr)")


def _setup_logging(log_file: Optional[str]) -> None:
    handler: logging.Handler
    handler = logging.FileHandler(log_file, encoding="utf-8") if log_file else \
        logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def run(args: argparse.Namespace) -> int:
    _setup_logging(args.log_file)
    cfg = ServeConfig(host=args.host, port=args.port, workers=args.workers, queue=args.queue,
                      max_visits=args.max_visits, max_time_ms=args.max_time_ms)
    try:
        srv = make_server(cfg, model=args.model)
    except OSError as e:
        print(f"gomoku serve: cannot listen on {cfg.host}:{cfg.port}: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # a bad model file
        print(f"gomoku serve: cannot load the model: {e}", file=sys.stderr)
        return 1
    m = srv.engine.models[Rule.FREESTYLE]
    sha = (m["sha256"] or {}).get("onnx") or (m["sha256"] or {}).get("npz") or "-"
    log.info("listening on http://%s:%d engine=%s %s model=%s version=%s sha256=%s workers=%d "
             "queue=%d max_visits=%d max_time_ms=%g", cfg.host, srv.port, ENGINE_NAME,
             __version__, m["name"], m["version"], sha[:16], cfg.workers, cfg.queue,
             cfg.max_visits, cfg.max_time_ms)
    if cfg.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("bound to %s: the service has no authentication", cfg.host)

    def _term(signum: int, frame: Optional[FrameType]) -> None:
        raise KeyboardInterrupt
    try:
        signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        pass
    try:
        srv.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
        log.info("stopped")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m tools.serve [OPTIONS]``: the same as ``gomoku serve [OPTIONS]``."""
    p = argparse.ArgumentParser(prog="python -m tools.serve", description=DESCRIPTION)
    _add_arguments(p)
    return run(p.parse_args(argv))
