"""``gomoku serve``: the HTTP move service and the browser board (FastAPI on uvicorn; the ``web``
extra: ``pip install -e '.[web]'``).

    gomoku serve [--host 127.0.0.1] [--port 8080] [--workers 2] [--queue 16]
                 [--max-visits 5000] [--max-time-ms 10000] [--max-games 256] [--game-idle 1800]
                 [--max-trees 8] [--model PATH] [--log-file FILE]

``GET /`` is a board to play in a browser (:mod:`tools.serve.static`), ``GET /docs`` lists the
routes, ``GET /openapi.json`` is their OpenAPI description, with the bodies of
:mod:`tools.serve.schema`.

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
* 431 request head over 64 KiB (or 400 for any other unreadable request line or header);
* 503 (with ``Retry-After``): all workers busy and the queue full, too many open connections, or a
  request that waited too long in the queue.

``/games`` (the board page's API; each game has its own board and its own search tree, kept
between moves): ``POST /games`` ``{"size", "rule", "you", "visits", "time_ms"}`` -> 201 and the
game's state; ``GET``/``DELETE /games/{id}``; ``POST /games/{id}/move`` ``{"move", "visits",
"time_ms"}`` -> your move and the engine's reply (422 ``forbidden_move``, ``illegal_move``,
``not_your_turn``, ``game_over``; 409 ``game_busy`` while it thinks); ``POST /games/{id}/undo``;
``POST /games/{id}/analyze``; ``GET /games/{id}/sgf`` and ``/psq`` (downloads). At most
``--max-games`` games are open; one without a request for ``--game-idle`` seconds is dropped (404
``no_such_game``); a new game beyond the limit is a 503. Only the ``--max-trees`` games answered
last keep their search tree between moves (memory: about 16 MB a tree at 5,000 visits).

Every request gets its own :class:`~gomoku_ai.player.Player` (its own tree, seed 0: the same request
gets the same answer); the evaluator and its network are loaded once and shared read-only. Searches
run on ``--workers`` threads with at most ``--queue`` more requests waiting. Each request is logged
(one line: method, path, status, time, client, model name@version and a summary of the request and
answer) to stderr, or to ``--log-file``. There is no authentication: bind to loopback (the default)
or put a proxy in front.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import socket
import sys
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any, List, Optional

from gomoku_ai import ENGINE_NAME, __version__
from gomoku_ai.rules import Rule

from .config import DEFAULT_IDLE_S, DEFAULT_MAX_GAMES, DEFAULT_MAX_TREES, MAX_HEAD_BYTES, ServeConfig

if TYPE_CHECKING:
    import uvicorn

    from .engine import Engine, WorkerPool
    from .games import GameStore

__all__ = ["ServeConfig", "WebServer", "make_server", "start_background", "add_parser", "run",
           "main", "MAX_HEAD_BYTES", "WEB_EXTRA_HINT"]

log = logging.getLogger("gomoku.serve")

WEB_EXTRA_HINT = ("gomoku serve needs the web extra (FastAPI, uvicorn): "
                  ".venv/bin/pip install -e '.[web]'")
DESCRIPTION = ("The HTTP move service and a board to play in a browser (GET /), without "
               "authentication (it binds to loopback by default). GET (or HEAD) /health: the "
               "engine, its models and limits. POST /move: a position (\"moves\": [\"h8\", "
               "\"i9\"], or \"board\": rows of 0/1/2, top row first) with optional \"rule\" (a "
               "name or a Gomocup code), \"side_to_move\", \"size\", \"visits\", \"time_ms\" "
               "and \"top\" -> the move, its value and the candidates. POST /analyze: the "
               "network's policy and value for a position. /games: browser games. GET /docs: "
               "every route. Needs the web extra (pip install -e '.[web]').")


def _raw_json(status: int, phrase: str, payload: dict, extra: str = "") -> bytes:
    body = json.dumps(payload, separators=(",", ":")).encode()
    return (f"HTTP/1.1 {status} {phrase}\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"{extra}Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


def protocol_class(cfg: ServeConfig) -> type:
    """uvicorn's h11 protocol with this service's connection rules: at most
    ``cfg.connection_limit()`` open connections (more: a JSON 503 with Retry-After, then closed),
    a connection that sends nothing is closed after ``io_timeout_s``, a request head still
    incomplete ``io_timeout_s`` after its first bytes gets a JSON 408, and an unreadable request
    gets a JSON 400 (a request head over :data:`MAX_HEAD_BYTES`: 431) instead of plain text."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    limit = cfg.connection_limit()

    class ServeProtocol(H11Protocol):
        _head_timer: Optional[asyncio.TimerHandle] = None

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            # a request head that is still incomplete io_timeout_s after its first bytes: 408
            if self._head_timer is None and self.conn.their_state is h11.IDLE and \
                    self.conn.trailing_data[0] and not self.transport.is_closing():
                self._head_timer = self.loop.call_later(cfg.io_timeout_s, self._head_timeout)

        def _head_timeout(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0] and \
                    not self.transport.is_closing():
                log.info("- - 408 client=%s (the request head did not arrive in time)",
                         (self.client or ("-",))[0])
                self.transport.write(_raw_json(408, "Request Timeout", {
                    "error": "timeout", "message": "the request head did not arrive in time",
                    "status": 408}))
                self.transport.close()

        def connection_lost(self, exc: Optional[Exception]) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            super().connection_lost(exc)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limit:
                log.warning("503 too many connections; refused %s", (self.client or ("-",))[0])
                transport.write(_raw_json(503, "Service Unavailable", {
                    "error": "busy", "message": "too many open connections", "status": 503},
                    "Retry-After: 1\r\n"))
                transport.close()
                return
            self.timeout_keep_alive_task = self.loop.call_later(
                cfg.io_timeout_s, self.timeout_keep_alive_handler)

        def send_400_response(self, msg: str) -> None:
            big = len(self.conn.trailing_data[0]) >= MAX_HEAD_BYTES
            status, phrase = (431, "Request Header Fields Too Large") if big else \
                (400, "Bad Request")
            text = (f"the request line and headers are over {MAX_HEAD_BYTES} bytes" if big else
                    "the request is not valid HTTP/1.1")
            log.info("- - %d client=%s (%s)", status, (self.client or ("-",))[0], text)
            self.transport.write(_raw_json(status, phrase, {
                "error": "bad_request" if status == 400 else "header_too_large",
                "message": text, "status": status}))
            self.transport.close()

    return ServeProtocol


class WebServer:
    """The service bound to its socket: :meth:`serve_forever` runs it (on the calling thread),
    :meth:`shutdown` (from another thread) stops it, :meth:`server_close` frees the socket and
    the search pool."""

    def __init__(self, cfg: ServeConfig, engine: "Engine") -> None:
        import uvicorn

        from .engine import WorkerPool
        from .games import GameStore
        from .web import Service, create_app

        self.cfg = cfg
        self.engine: Engine = engine
        self.pool: WorkerPool = WorkerPool(cfg.workers, cfg.queue, cfg.queue_timeout_s)
        self.games: GameStore = GameStore(cfg.max_games, cfg.game_idle_s,
                                          max_trees=cfg.max_trees)
        self.app = create_app(Service(cfg, engine, self.pool, self.games))
        self.socket = socket.create_server((cfg.host, cfg.port), backlog=128,
                                           family=socket.AF_INET6 if ":" in cfg.host
                                           else socket.AF_INET)
        config = uvicorn.Config(self.app, http=protocol_class(cfg), lifespan="off",
                                log_config=None, access_log=False, server_header=False,
                                date_header=True, timeout_keep_alive=int(max(1, cfg.io_timeout_s)),
                                timeout_graceful_shutdown=2,
                                h11_max_incomplete_event_size=MAX_HEAD_BYTES)
        self._server: uvicorn.Server = uvicorn.Server(config)
        self._stopped = threading.Event()

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (or, on the main thread, SIGINT / SIGTERM)."""
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self, timeout_s: float = 10.0) -> None:
        self._server.should_exit = True
        self._stopped.wait(timeout_s)

    def server_close(self) -> None:
        self.socket.close()
        self.pool.shutdown()


def make_server(cfg: ServeConfig, engine: Optional["Engine"] = None,
                model: Optional[str] = None) -> WebServer:
    """A bound (not yet serving) server; ``engine`` defaults to the shipped model (or ``model``)."""
    from .engine import Engine
    if engine is None:
        engine = Engine.load(model, cfg.max_visits, cfg.max_time_ms)
    else:
        engine.max_visits, engine.max_time_ms = cfg.max_visits, cfg.max_time_ms
    return WebServer(cfg, engine)


def start_background(cfg: ServeConfig, engine: Optional["Engine"] = None,
                     model: Optional[str] = None) -> "tuple[WebServer, threading.Thread]":
    """Serve on a daemon thread (tests, benchmarks); returns once the server answers.

    Stop with ``srv.shutdown(); srv.server_close()``."""
    srv = make_server(cfg, engine, model)
    t = threading.Thread(target=srv.serve_forever, name="serve-loop", daemon=True)
    t.start()
    for _ in range(500):
        if srv._server.started or srv._stopped.is_set():
            break
        srv._stopped.wait(0.01)
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
    p = sub.add_parser("serve", help="HTTP move service and browser board (GET /, POST /move, POST /analyze)",
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
    p.add_argument("--max-games", type=_positive_int, default=DEFAULT_MAX_GAMES,
                   help="browser games open at once; beyond it a new game is a 503 (default: "
                        "%(default)s)")
    p.add_argument("--game-idle", type=_positive_float, default=DEFAULT_IDLE_S,
                   help="seconds without a request after which a browser game is dropped "
                        "(default: %(default)s)")
    p.add_argument("--max-trees", type=_positive_int, default=DEFAULT_MAX_TREES,
                   help="browser games that keep their search tree between moves (the ones "
                        "answered last); a tree is up to --max-visits nodes, about 16 MB at "
                        "5,000 (default: %(default)s)")
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
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        print(WEB_EXTRA_HINT, file=sys.stderr)
        return 2
    cfg = ServeConfig(host=args.host, port=args.port, workers=args.workers, queue=args.queue,
                      max_visits=args.max_visits, max_time_ms=args.max_time_ms,
                      max_games=args.max_games, game_idle_s=args.game_idle,
                      max_trees=args.max_trees)
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
             "queue=%d max_visits=%d max_time_ms=%g max_games=%d", cfg.host, srv.port,
             ENGINE_NAME, __version__, m["name"], m["version"], sha[:16], cfg.workers, cfg.queue,
             cfg.max_visits, cfg.max_time_ms, cfg.max_games)
    if cfg.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("bound to %s: the service has no authentication", cfg.host)
    def _term(signum: int, frame: Optional[FrameType]) -> None:
        raise KeyboardInterrupt
    # uvicorn handles SIGINT / SIGTERM itself while it serves, then raises the signal again once
    # it has stopped: this handler makes that a clean exit (status 0)
    try:
        signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        pass
    try:
        srv.serve_forever()
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
