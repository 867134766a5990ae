"""The web application of ``gomoku serve`` (FastAPI): the JSON routes, the browser games and the
board page. :mod:`tools.serve.app` runs it on uvicorn and documents the routes.

Bodies are read here, not by FastAPI, so that every malformed request gets this service's own
answer (411, 413, 408, 415, or a 400 / 422 with a code) rather than FastAPI's generic 422; their
shape is still the pydantic model of :mod:`tools.serve.schema`, which ``/openapi.json`` publishes.
Searches run on the bounded :class:`~tools.serve.engine.WorkerPool`, never on the event loop.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import logging
import threading
import time
from concurrent.futures import CancelledError, Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, MutableMapping, Optional, Tuple, Type

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match

from gomoku_ai import ENGINE_NAME, __version__
from gomoku_ai.player import NoMoveError
from gomoku_ai.rules import BLACK, WHITE, Rule

from . import schema
from .engine import Busy, Engine, WorkerPool
from .config import MAX_HEAD_BYTES, ServeConfig
from .games import Game, GameStore
from .request import (M, Position, RequestError, illegal, move_of, parse_limits, parse_position,
                      parse_rule, validated)

log = logging.getLogger("gomoku.serve")

STATIC = Path(__file__).resolve().parent / "static"
#: the most header fields, and bytes of them, a request may have (more: 431); the HTTP layer
#: refuses a longer head that arrives in pieces before it gets here (:mod:`tools.serve.app`)
MAX_HEADERS = 100
#: how many candidates a game's engine answer lists (the page's visit overlay)
GAME_TOP = 12

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Service:
    """What the routes share: the configuration, the engine, the search pool and the games."""

    cfg: ServeConfig
    engine: Engine
    pool: WorkerPool
    games: GameStore


def _json(status: int, payload: Any, headers: Optional[Dict[str, str]] = None) -> JSONResponse:
    return JSONResponse(payload, status_code=status, headers=headers)


def error_response(err: RequestError, headers: Optional[Dict[str, str]] = None) -> JSONResponse:
    """The JSON answer of a RequestError: 408, 411 and 413 close the connection (the body was not
    read), a 503 says when to retry."""
    h = dict(headers or {})
    if err.status in (408, 411, 413, 431):
        h["Connection"] = "close"
    if err.status == 503:
        h["Retry-After"] = "1"
    return _json(err.status, err.payload(), h)


def _log_fields(request: Request) -> Dict[str, Any]:
    """The access-log fields of this request (set by the routes, written by :class:`AccessLog`)."""
    fields: Dict[str, Any] = request.scope.setdefault("gomoku.log", {})
    return fields


# ----------------------------------------------------------------------------------- bodies
async def read_json(request: Request, cfg: ServeConfig) -> Any:
    """The request body as JSON: 411 without a Content-Length (chunked bodies are refused), 413
    over ``max_body_bytes``, 408 when it does not arrive within ``io_timeout_s``, 415 unless the
    Content-Type is ``application/json`` (UTF-8), 400 when it is not JSON (NaN and Infinity
    included)."""
    h = request.headers
    if "transfer-encoding" in h:
        raise RequestError(411, "length_required", "send the body with a Content-Length "
                                                   "(chunked transfer encoding is not accepted)")
    cl = h.get("content-length")
    if cl is None:
        raise RequestError(411, "length_required", "a Content-Length header is required")
    n = int(cl)   # the HTTP layer has already refused a malformed Content-Length (400)
    if n > cfg.max_body_bytes:
        raise RequestError(413, "body_too_large", f"the body has {n} bytes; the limit is "
                                                  f"{cfg.max_body_bytes}")
    try:
        raw = await asyncio.wait_for(request.body(), timeout=cfg.io_timeout_s)
    except asyncio.TimeoutError:
        raise RequestError(408, "timeout", "the body did not arrive in time") from None
    ctype = h.get("content-type", "")
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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


async def read_model(request: Request, svc: Service, model: Type[M]) -> M:
    return validated(model, await read_json(request, svc.cfg))


async def searched(svc: Service, fn: Callable[[threading.Event], Any],
                   abandoned: Optional[Callable[["Future[Any]"], None]] = None) -> Any:
    """``fn(cancelled)`` on the search pool: 503 when the pool is full, the search waited too
    long or did not finish in time; 500 (logged) when it failed. When the request gives up on a
    search that is still running (a timeout, or the client went away), ``cancelled`` is set (a
    search stops at once) and ``abandoned(future)`` is called, so that a caller can keep what the
    search uses (a game's tree) until it has really ended."""
    cfg = svc.cfg
    cancelled = threading.Event()
    try:
        fut = svc.pool.submit(lambda: fn(cancelled), cancelled)
    except Busy as e:
        raise RequestError(503, "busy", str(e)) from None
    wait = cfg.queue_timeout_s + cfg.max_time_ms / 1000.0 + cfg.search_grace_s

    def give_up() -> None:
        cancelled.set()
        if abandoned is not None and not fut.done():
            abandoned(fut)

    try:
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout=wait)
    except asyncio.TimeoutError:
        give_up()
        raise RequestError(503, "busy", "the search did not finish in time") from None
    except (CancelledError, asyncio.CancelledError):
        give_up()
        raise
    except Busy as e:
        raise RequestError(503, "busy", str(e)) from None
    except NoMoveError as e:
        raise illegal("no_legal_move", str(e)) from None
    except RequestError:
        raise
    except Exception:
        log.exception("search failed")
        raise RequestError(500, "internal_error", "the engine failed on this position; the "
                                                  "error is logged") from None


# ----------------------------------------------------------------------------------- the app
ERRORS: Dict[int | str, Dict[str, Any]] = {
    s: {"model": schema.ErrorBody, "description": d} for s, d in (
        (400, "malformed request (the error code names the field)"),
        (404, "no such path or game"), (411, "no Content-Length"), (413, "body over 64 KiB"),
        (415, "not application/json"), (422, "well formed, but no position to play"),
        (503, "busy: all workers and the queue taken (Retry-After)"))}

DESCRIPTION = ("A Gomoku engine over HTTP, without authentication (it binds to loopback by "
               "default). `GET /` is a board to play in a browser. `POST /move`: a position "
               "(\"moves\": [\"h8\", \"i9\"], or \"board\": rows of 0/1/2, top row first) with "
               "optional \"rule\", \"side_to_move\", \"size\", \"visits\", \"time_ms\" and \"top\" "
               "-> the move, its value and the candidates. `POST /analyze`: the network's policy "
               "and value. `/games`: browser games, each with its own board and search tree. "
               "Errors are `{\"error\", \"message\", \"status\"}`.")


def create_app(svc: Service) -> ASGIApp:
    """The ASGI application: the FastAPI routes inside the access log."""
    app = FastAPI(title="gomoku serve", version=__version__, description=DESCRIPTION,
                  docs_url=None, redoc_url=None, openapi_url="/openapi.json")
    page = (STATIC / "index.html").read_bytes()
    docs = (STATIC / "docs.html").read_bytes()
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    _add_error_handlers(app)
    _add_engine_routes(app, svc)
    _add_new_game_route(app, svc)
    _add_game_routes(app, svc)
    _add_download_routes(app, svc.games)
    _publish_request_models(app)

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    @app.get("/docs", include_in_schema=False)
    async def api_docs() -> Response:
        return HTMLResponse(docs, headers={"Cache-Control": "no-cache"})

    _head_on_get_routes(app)
    return AccessLog(app, itertools.count(1))


def _head_on_get_routes(app: FastAPI) -> None:
    """Every GET route answers HEAD too (the same status and headers; uvicorn sends no body).
    The OpenAPI document is built first, so that it lists the GET operations only."""
    app.openapi()
    for route in app.router.routes:
        methods = getattr(route, "methods", None)
        if isinstance(methods, set) and "GET" in methods:
            methods.add("HEAD")


def _allow(app: FastAPI, scope: Scope) -> str:
    """The methods the routes at ``scope``'s path answer, for a 405's Allow header (the static
    files answer GET and HEAD)."""
    methods: set = set()
    probe = {"type": "http", "method": "GET", "path": scope["path"], "root_path": ""}
    for route in app.router.routes:
        if route.matches(probe)[0] is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ("GET", "HEAD"))
    order = ["GET", "HEAD", "POST", "DELETE"]
    return ", ".join(sorted(methods, key=lambda m: order.index(m) if m in order else 9))


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestError)
    async def request_error(request: Request, exc: RequestError) -> Response:
        _log_fields(request)["resp"] = {"error": exc.code}
        return error_response(exc)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        path = request.url.path
        if exc.status_code == 404:
            err = RequestError(404, "not_found", f"no such path {path[:100]!r}; try GET / (the "
                                                 "board), GET /health, POST /move, POST /analyze "
                                                 "or GET /docs")
            headers = None
        elif exc.status_code == 405:
            allow = _allow(app, request.scope)
            err = RequestError(405, "method_not_allowed",
                               f"{path[:100]} accepts {allow} only, not {request.method[:20]}")
            headers = {"Allow": allow}
        else:
            err = RequestError(exc.status_code, "http_error", str(exc.detail))
            headers = None
        _log_fields(request)["resp"] = {"error": err.code}
        return error_response(err, headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        return error_response(RequestError(500, "internal_error", "unexpected server error; it "
                                                                  "is logged"))

    @app.exception_handler(ClientDisconnect)
    async def gone(request: Request, exc: ClientDisconnect) -> Response:
        return Response(status_code=400)   # nobody reads it


def _position(request: Request, svc: Service, req: schema.PositionRequest) -> Position:
    pos = parse_position(req)
    fields = _log_fields(request)
    fields["req"] = pos.summary()
    b = pos.board
    fields["model"] = svc.engine.model_tag(b.rule, b.width, b.height)
    return pos


def _add_engine_routes(app: FastAPI, svc: Service) -> None:
    cfg, eng = svc.cfg, svc.engine

    @app.get("/health", response_model=None, operation_id="health",
             responses={200: {"model": schema.Health}})
    async def health(request: Request) -> Response:
        """The engine, its models and the server's limits; never queued."""
        _log_fields(request)["model"] = eng.model_tag(Rule.FREESTYLE)
        return _json(200, {
            "status": "ok", "engine": ENGINE_NAME, "engine_version": __version__,
            "model": eng.models[Rule.FREESTYLE],
            "models": {r.value: m for r, m in eng.models.items()},
            "limits": {"max_visits": cfg.max_visits, "max_time_ms": cfg.max_time_ms,
                       "workers": cfg.workers, "queue": cfg.queue,
                       "max_body_bytes": cfg.max_body_bytes, "max_games": cfg.max_games,
                       "game_idle_s": cfg.game_idle_s, "max_trees": cfg.max_trees},
            "busy": svc.pool.in_flight, "games": len(svc.games)})

    @app.post("/move", response_model=None, openapi_extra=_body(schema.MoveRequest),
              responses={200: {"model": schema.MoveAnswer}, **ERRORS})
    async def move(request: Request) -> Response:
        """The engine's move in a position, within the limits (clamped to the server's caps)."""
        req = await read_model(request, svc, schema.MoveRequest)
        pos = _position(request, svc, req)
        limits = parse_limits(req.visits, req.time_ms, cfg.max_visits, cfg.max_time_ms)
        fields = _log_fields(request)
        fields["req"].update(visits=limits.visits, time_ms=limits.time_ms)
        out = await searched(svc, lambda stop: eng.move(pos.board, limits, req.top, stop=stop))
        fields["resp"] = {"move": out["move"], "value": out["value"], "visits": out["visits"],
                          "source": out["source"], "search_ms": out["elapsed_ms"]}
        return _json(200, out)

    @app.post("/analyze", response_model=None, openapi_extra=_body(schema.AnalyzeRequest),
              responses={200: {"model": schema.AnalyzeAnswer}, **ERRORS})
    async def analyze(request: Request) -> Response:
        """The network's prior (a heatmap) and value for the side to move."""
        req = await read_model(request, svc, schema.AnalyzeRequest)
        pos = _position(request, svc, req)
        out = await searched(svc, lambda stop: eng.analyze(pos.board, req.top))
        _log_fields(request)["resp"] = {"value": out["value"],
                                        "top": out["top"][0]["move"] if out["top"] else None}
        return _json(200, out)


def _body(model: Type[schema.BaseModel]) -> Dict[str, Any]:
    """The OpenAPI request body of a route that reads its body itself (see the module doc)."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}


class SearchStillRunning(Exception):
    """The request gave up on a game's search that has not ended yet: the game stays busy (its
    Player is in use) until ``future`` is done."""

    def __init__(self, error: BaseException, future: "Future[Any]") -> None:
        super().__init__(str(error))
        self.error = error
        self.future = future


async def engine_reply(svc: Service, game: Game, visits: Optional[int],
                       time_ms: Optional[float]) -> None:
    """The engine's move in ``game`` (on the pool, on a copy of the board, with the game's own
    tree), played on the board. Raises :class:`SearchStillRunning` when the request gave up on a
    search that goes on."""
    cfg = svc.cfg
    limits = parse_limits(visits, time_ms, cfg.max_visits, cfg.max_time_ms)
    board = game.board.copy()
    running: List["Future[Any]"] = []
    try:
        out = await searched(svc, lambda stop: svc.engine.move(board, limits, GAME_TOP,
                                                               game.player, stop=stop),
                             abandoned=running.append)
    except BaseException as e:
        if running:
            raise SearchStillRunning(e, running[0]) from None
        raise
    game.board.push(game.board.index(out["x"], out["y"]))
    game.engine = out
    svc.games.searched(game)


def _add_new_game_route(app: FastAPI, svc: Service) -> None:
    eng, games = svc.engine, svc.games

    @app.post("/games", status_code=201, response_model=None,
              openapi_extra=_body(schema.NewGameRequest),
              responses={201: {"model": schema.GameState}, **ERRORS})
    async def new_game(request: Request) -> Response:
        """A new game against the engine; as White, the engine has played Black's first move."""
        req = await read_model(request, svc, schema.NewGameRequest)
        rule = parse_rule(req.rule)
        you = BLACK if req.you == "black" else WHITE
        game = games.create(req.size, req.size, rule, you,
                            lambda b: eng.new_player(b, reuse_tree=True))
        _log_fields(request).update(req={"game": game.id[:8], "rule": rule.value,
                                         "size": req.size, "you": req.you})
        if game.engine_to_move():
            game.busy = True
            try:
                await engine_reply(svc, game, req.visits, req.time_ms)
            except BaseException as e:
                games.delete(game.id)   # nobody has its id; a search still running just ends
                if isinstance(e, SearchStillRunning):
                    raise e.error from None
                raise
            games.release(game)
        return _json(201, game.state(games.idle_s))


def _add_game_routes(app: FastAPI, svc: Service) -> None:
    eng, games = svc.engine, svc.games

    def state(game: Game) -> Response:
        return _json(200, game.state(games.idle_s))

    @app.get("/games/{game_id}", response_model=None,
             responses={200: {"model": schema.GameState}, 404: ERRORS[404]})
    async def get_game(game_id: str) -> Response:
        return state(games.get(game_id))

    @app.delete("/games/{game_id}", status_code=204, response_model=None,
                responses={404: ERRORS[404]})
    async def delete_game(game_id: str) -> Response:
        games.delete(game_id)
        return Response(status_code=204)

    @app.post("/games/{game_id}/move", response_model=None,
              openapi_extra=_body(schema.GameMoveRequest),
              responses={200: {"model": schema.GameState}, 409: {"model": schema.ErrorBody},
                         **ERRORS})
    async def game_move(game_id: str, request: Request) -> Response:
        """Your move, then (unless the game is over) the engine's reply. 422 ``forbidden_move``,
        ``illegal_move``, ``not_your_turn`` or ``game_over``; 409 while the engine thinks."""
        req = await read_model(request, svc, schema.GameMoveRequest)
        game = games.claim(game_id)
        release_now = True
        try:
            m = move_of(game.board, req.move)
            _log_fields(request).update(req={"game": game_id[:8],
                                             "move": game.board.move_name(m)})
            game.play(m)
            if game.engine_to_move():
                try:
                    await engine_reply(svc, game, req.visits, req.time_ms)
                except SearchStillRunning as e:
                    game.board.pop()   # no reply: your move is taken back, so you can retry
                    # the game's Player is still searching: the game stays busy until it ends
                    release_now = False
                    e.future.add_done_callback(lambda _f: games.release(game))
                    raise e.error from None
                except BaseException:
                    game.board.pop()
                    raise
        finally:
            if release_now:
                games.release(game)
        return state(game)

    @app.post("/games/{game_id}/undo", response_model=None,
              responses={200: {"model": schema.GameState}, 409: {"model": schema.ErrorBody},
                         404: ERRORS[404], 422: ERRORS[422]})
    async def undo(game_id: str) -> Response:
        """Your last move and the engine's reply to it, taken back."""
        game = games.claim(game_id)
        try:
            game.undo()
        finally:
            games.release(game)
        return state(game)

    @app.post("/games/{game_id}/analyze", response_model=None,
              responses={200: {"model": schema.AnalyzeAnswer}, 404: ERRORS[404],
                         503: ERRORS[503]})
    async def analyze_game(game_id: str) -> Response:
        """The network's policy and value in the game's position (for the side to move)."""
        game = games.get(game_id)
        if game.over():
            raise illegal("game_over", "the game is over")
        board = game.board.copy()
        return _json(200, await searched(svc, lambda stop: eng.analyze(board, schema.MAX_TOP)))

def _add_download_routes(app: FastAPI, games: GameStore) -> None:
    def download(game_id: str, ext: str) -> Response:
        game = games.get(game_id)
        text = game.sgf() if ext == "sgf" else game.psq()
        media = "application/x-go-sgf" if ext == "sgf" else "text/plain"
        return Response(text, media_type=media, headers={
            "Content-Disposition": f'attachment; filename="gomoku-{game_id[:8]}.{ext}"'})

    @app.get("/games/{game_id}/sgf", response_model=None, responses={404: ERRORS[404]})
    async def sgf(game_id: str) -> Response:
        """The game as an SGF file (a download)."""
        return download(game_id, "sgf")

    @app.get("/games/{game_id}/psq", response_model=None, responses={404: ERRORS[404]})
    async def psq(game_id: str) -> Response:
        """The game as a Piskvork PSQ file (a download)."""
        return download(game_id, "psq")


def _publish_request_models(app: FastAPI) -> None:
    """FastAPI's OpenAPI document plus the request models the routes read themselves."""
    original = app.openapi

    def openapi() -> Dict[str, Any]:
        if app.openapi_schema is None:
            doc = original()
            comps = doc.setdefault("components", {}).setdefault("schemas", {})
            for model in (schema.MoveRequest, schema.AnalyzeRequest, schema.NewGameRequest,
                          schema.GameMoveRequest):
                js = model.model_json_schema(ref_template="#/components/schemas/{model}")
                comps.update(js.pop("$defs", {}))
                comps[model.__name__] = js
            # FastAPI documents its own 422 (path parameter validation); this service's 4xx
            # answers are all ErrorBody
            for name in ("HTTPValidationError", "ValidationError"):
                comps.pop(name, None)
            for ops in doc["paths"].values():
                for op in ops.values():
                    r422 = op.get("responses", {}).get("422")
                    if r422 and "HTTPValidationError" in json.dumps(r422):
                        op["responses"]["422"] = {
                            "description": "well formed, but not playable",
                            "content": {"application/json": {"schema": {
                                "$ref": "#/components/schemas/ErrorBody"}}}}
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi   # type: ignore[method-assign]


# ------------------------------------------------------------------------------- access log
class AccessLog:
    """ASGI wrapper around the whole app: a request id header, ``Cache-Control: no-store`` on JSON,
    and one log line per request (method, path, status, ms, client, model, and the summaries
    the routes left in ``scope["gomoku.log"]``)."""

    def __init__(self, app: FastAPI, ids: "itertools.count[int]") -> None:
        self.app = app
        self.ids = ids

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = next(self.ids)
        t0 = time.perf_counter()
        fields: Dict[str, Any] = {}
        scope["gomoku.log"] = fields
        status = [0]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                headers: List[Tuple[bytes, bytes]] = list(message.get("headers", []))
                headers.append((b"x-request-id", str(rid).encode()))
                if any(k == b"content-type" and v.startswith(b"application/json")
                       for k, v in headers):
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        try:
            head = scope.get("headers", [])
            if len(head) > MAX_HEADERS or sum(len(k) + len(v) + 4 for k, v in head) > MAX_HEAD_BYTES:
                fields["resp"] = {"error": "header_too_large"}
                await error_response(RequestError(
                    431, "header_too_large", f"over {MAX_HEADERS} header fields or "
                                             f"{MAX_HEAD_BYTES} bytes of them"))(
                    scope, receive, send_with_headers)
                return
            await self.app(scope, receive, send_with_headers)
        except Exception:
            log.exception("#%d unexpected error", rid)
            status[0] = status[0] or 500
        finally:
            ms = (time.perf_counter() - t0) * 1000.0
            client = (scope.get("client") or ("-",))[0]
            log.info("#%d %s %s %d %.1fms client=%s model=%s req=%s resp=%s", rid,
                     scope.get("method"), str(scope.get("path", ""))[:100], status[0], ms, client,
                     fields.get("model", "-"),
                     json.dumps(fields.get("req", {}), separators=(",", ":")),
                     json.dumps(fields.get("resp", {}), separators=(",", ":")))
