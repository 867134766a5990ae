"""``gomoku serve``'s browser games (``/games``), its published schemas (OpenAPI) and the page's
files. A heuristic engine with a few visits keeps every game short; the answers are checked
against the pydantic models of :mod:`tools.serve.schema`."""
from __future__ import annotations

import contextlib
import http.client
import json
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest

from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.testplayers import GateEvaluator
from gomoku_ai.records import read_psq, read_sgf
from gomoku_ai.rules import BLACK, WHITE, Rule
from tools.serve import app as serve
from tools.serve import schema
from tools.serve.engine import Engine
from tools.serve.games import Game, GameStore
from tools.serve.request import parse_limits
from tests.test_serve import raw_exchange

HOST = "127.0.0.1"
#: squares far from the centre, in order: a "human" who never attacks, so the engine wins soon
PASSIVE = [(x, y) for y in (0, 14) for x in range(15)] + [(0, y) for y in range(1, 14)]
#: a renju position where i8 (x 8, y 7) is a double-three for Black (test_serve's RENJU_D3)
RENJU_D3 = ["h8", "a1", "g8", "a3", "i9", "a5", "i10", "a7"]


def call(port: int, method: str, path: str, body: Any = None,
         ) -> Tuple[int, Any, Dict[str, str]]:
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        raw = r.read()
        hd = {k.lower(): v for k, v in r.getheaders()}
        if hd.get("content-type", "").startswith("application/json") and raw:
            return r.status, json.loads(raw), hd
        return r.status, raw, hd
    finally:
        c.close()


@contextlib.contextmanager
def serving(cfg: serve.ServeConfig, engine: Optional[Engine] = None,
            gate: Optional[GateEvaluator] = None) -> Iterator[Any]:
    """A server on a background thread (the heuristic engine unless ``engine``), stopped on exit;
    ``gate`` is opened first, so that a held search cannot keep it from stopping."""
    srv, t = serve.start_background(cfg, engine or Engine({Rule.FREESTYLE: HeuristicEvaluator()}))
    try:
        yield srv
    finally:
        if gate is not None:
            gate.gate.set()
        srv.shutdown()
        srv.server_close()
        t.join(timeout=5)


@pytest.fixture(scope="module")
def server():
    cfg = serve.ServeConfig(host=HOST, port=0, workers=2, queue=8, max_visits=60,
                            max_time_ms=3000, max_games=4)
    with serving(cfg) as srv:
        yield srv


@pytest.fixture(scope="module")
def port(server):
    return server.port


def new_game(port: int, **body: Any) -> Dict[str, Any]:
    st, js, _ = call(port, "POST", "/games", {"visits": 20, **body})
    assert st == 201, js
    schema.GameState.model_validate(js)
    return js


def play_out(port: int, game: Dict[str, Any]) -> Dict[str, Any]:
    """The passive human's moves until the game ends (at most len(PASSIVE) moves)."""
    taken = {(m["x"], m["y"]) for m in game["moves"]}
    for x, y in PASSIVE:
        if game["status"] != "playing":
            break
        if (x, y) in taken:
            continue
        st, game, _ = call(port, "POST", f"/games/{game['id']}/move", {"move": [x, y],
                                                                       "visits": 20})
        assert st == 200, game
        schema.GameState.model_validate(game)
        taken = {(m["x"], m["y"]) for m in game["moves"]}
    return game


# ----------------------------------------------------------------------------------- games
def test_a_game_to_a_five_then_its_sgf_and_psq_read_back(port):
    game = new_game(port)
    assert game["moves"] == [] and game["to_move"] == "black" and game["engine"] is None
    game = play_out(port, game)
    assert game["status"] == "white_won", game["status"]   # the engine (White) made five
    line = {(p["x"], p["y"]) for p in game["winning_line"]}
    assert len(line) >= 5 and line <= {(m["x"], m["y"]) for m in game["moves"]
                                       if m["color"] == "white"}
    colors = [m["color"] for m in game["moves"]]
    assert colors == ["black", "white"] * (len(colors) // 2) + ["black"] * (len(colors) % 2)
    played = [(m["x"], m["y"]) for m in game["moves"]]
    st, sgf, hd = call(port, "GET", f"/games/{game['id']}/sgf")
    assert st == 200 and "attachment" in hd["content-disposition"]
    rec = read_sgf(sgf.decode())
    assert rec.moves == played and rec.result is not None and rec.result.winner == WHITE
    st, psq, _ = call(port, "GET", f"/games/{game['id']}/psq")
    assert st == 200 and read_psq(psq.decode()).moves == played
    st, js, _ = call(port, "POST", f"/games/{game['id']}/move", {"move": [7, 3]})
    assert (st, js["error"]) == (422, "game_over")
    assert call(port, "DELETE", f"/games/{game['id']}")[0] == 204
    assert call(port, "GET", f"/games/{game['id']}")[1]["error"] == "no_such_game"


def test_as_white_the_engine_opens_and_its_answer_is_a_move_answer(port):
    game = new_game(port, you="white")
    assert [m["color"] for m in game["moves"]] == ["black"] and game["to_move"] == "white"
    eng = game["engine"]
    schema.MoveAnswer.model_validate(eng)
    assert (eng["x"], eng["y"]) == (game["moves"][0]["x"], game["moves"][0]["y"])
    assert eng["side_to_move"] == "black" and 0 <= eng["winrate"] <= 1
    call(port, "DELETE", f"/games/{game['id']}")


def test_undo_takes_back_your_move_and_the_reply(port):
    game = new_game(port)
    st, js, _ = call(port, "POST", f"/games/{game['id']}/undo")
    assert (st, js["error"]) == (422, "nothing_to_undo")
    _, g1, _ = call(port, "POST", f"/games/{game['id']}/move", {"move": "h8", "visits": 10})
    _, g2, _ = call(port, "POST", f"/games/{game['id']}/move", {"move": [0, 0], "visits": 10})
    assert len(g1["moves"]) == 2 and len(g2["moves"]) == 4
    st, back, _ = call(port, "POST", f"/games/{game['id']}/undo")
    assert st == 200 and back["moves"] == g1["moves"] and back["engine"] is None
    st, js, _ = call(port, "POST", f"/games/{game['id']}/move", {"move": "h8"})
    assert (st, js["error"]) == (422, "illegal_move")   # occupied
    call(port, "DELETE", f"/games/{game['id']}")


def test_renju_forbidden_point_is_listed_and_refused(server, port):
    game = new_game(port, rule="renju")
    gid = game["id"]
    # the position is set on the server's board directly: the engine would not answer a1..a7
    board = server.games.get(gid).board
    for mv in RENJU_D3:
        board.push(board.parse(mv))
    st, js, _ = call(port, "GET", f"/games/{gid}")
    assert {"x": 8, "y": 7, "move": "i8", "kind": "double-three"} in js["forbidden"]
    st, js, _ = call(port, "POST", f"/games/{gid}/move", {"move": "i8"})
    assert (st, js["error"]) == (422, "forbidden_move") and "double-three" in js["message"]
    assert len(call(port, "GET", f"/games/{gid}")[1]["moves"]) == len(RENJU_D3)
    call(port, "DELETE", f"/games/{gid}")


def test_analyze_a_game_and_the_answers_match_the_schemas(port):
    game = new_game(port)
    st, an, _ = call(port, "POST", f"/games/{game['id']}/analyze")
    assert st == 200
    schema.AnalyzeAnswer.model_validate(an)
    assert abs(sum(map(sum, an["policy"])) - 1) < 225 * 0.5e-5   # rounded to 5 decimals
    st, mv, _ = call(port, "POST", "/move", {"moves": ["h8"], "visits": 10})
    schema.MoveAnswer.model_validate(mv)
    st, hl, _ = call(port, "GET", "/health")
    schema.Health.model_validate(hl)
    assert hl["games"] >= 1
    st, err, _ = call(port, "POST", "/move", {"moves": "h8"})
    schema.ErrorBody.model_validate(err)
    call(port, "DELETE", f"/games/{game['id']}")


def test_game_errors(port):
    assert call(port, "GET", "/games/nope")[1]["error"] == "no_such_game"
    assert call(port, "POST", "/games/nope/move", {"move": "h8"})[1]["error"] == "no_such_game"
    for body, code in [({"you": "red"}, "bad_color"), ({"size": 3}, "bad_size"),
                       ({"rule": "chess"}, "bad_rule"), ({"visits": 0}, "bad_limit"),
                       ({"colour": "black"}, "unknown_key")]:
        st, js, _ = call(port, "POST", "/games", body)
        assert (st, js["error"]) == (400, code), (body, js)
    game = new_game(port)
    for body, status, code in [({"move": "zz"}, 400, "bad_move"), ({}, 400, "bad_move"),
                               ({"move": [20, 0]}, 422, "illegal_move"),
                               ({"move": [1, 2, 3]}, 400, "bad_move")]:
        st, js, _ = call(port, "POST", f"/games/{game['id']}/move", body)
        assert (st, js["error"]) == (status, code), (body, js)
    call(port, "DELETE", f"/games/{game['id']}")


def test_a_20x20_game(port):
    game = new_game(port, size=20)
    assert (game["width"], game["height"]) == (20, 20)
    st, g, _ = call(port, "POST", f"/games/{game['id']}/move", {"move": [19, 19], "visits": 10})
    assert st == 200 and len(g["moves"]) == 2
    call(port, "DELETE", f"/games/{game['id']}")


def test_games_are_bounded_and_the_limit_is_a_503(server, port):
    ids = [new_game(port)["id"] for _ in range(4 - len(server.games))]
    st, js, hd = call(port, "POST", "/games", {})
    assert (st, js["error"]) == (503, "busy") and hd["retry-after"] == "1"
    for gid in ids:
        call(port, "DELETE", f"/games/{gid}")
    assert call(port, "POST", "/games", {})[0] == 201


def test_a_game_answers_one_move_at_a_time_and_a_failed_reply_takes_yours_back():
    ev = GateEvaluator()
    cfg = serve.ServeConfig(host=HOST, port=0, workers=1, queue=0, max_visits=20,
                            max_time_ms=3000)
    with serving(cfg, Engine({Rule.FREESTYLE: ev}), gate=ev) as srv:
        a = new_game(srv.port)   # no search yet: Black to move
        b = new_game(srv.port)
        with ThreadPoolExecutor(1) as ex:
            first = ex.submit(call, srv.port, "POST", f"/games/{a['id']}/move", {"move": "h8"})
            assert ev.entered.wait(10)
            st, js, _ = call(srv.port, "POST", f"/games/{a['id']}/move", {"move": "a1"})
            assert (st, js["error"]) == (409, "game_busy")
            assert call(srv.port, "POST", f"/games/{a['id']}/undo")[1]["error"] == "game_busy"
            st, js, _ = call(srv.port, "GET", f"/games/{a['id']}")
            assert st == 200 and [m["move"] for m in js["moves"]] == ["h8"]   # not mid-search
            # the one worker is taken: game b's reply is refused, and its move taken back
            st, js, hd = call(srv.port, "POST", f"/games/{b['id']}/move", {"move": "h8"})
            assert (st, js["error"], hd["retry-after"]) == (503, "busy", "1")
            assert call(srv.port, "GET", f"/games/{b['id']}")[1]["moves"] == []
            ev.gate.set()
            st, js, _ = first.result(timeout=20)
            assert st == 200 and len(js["moves"]) == 2


def test_a_reply_given_up_keeps_the_game_busy_until_its_search_ends():
    ev = GateEvaluator()
    cfg = serve.ServeConfig(host=HOST, port=0, workers=1, queue=0, max_visits=20,
                            max_time_ms=200, queue_timeout_s=2.0, search_grace_s=0.3)
    with serving(cfg, Engine({Rule.FREESTYLE: ev}), gate=ev) as srv:
        game = new_game(srv.port)
        gid = game["id"]
        st, js, _ = call(srv.port, "POST", f"/games/{gid}/move", {"move": "h8"})
        assert (st, js["error"]) == (503, "busy") and ev.entered.is_set()
        st, js, _ = call(srv.port, "GET", f"/games/{gid}")
        assert js["moves"] == []                       # your move was taken back ...
        st, js, _ = call(srv.port, "POST", f"/games/{gid}/move", {"move": "h8"})
        assert (st, js["error"]) == (409, "game_busy")  # ... but its search still holds the tree
        ev.gate.set()                                   # the search ends (it was told to stop)
        end = time.monotonic() + 10
        while time.monotonic() < end and srv.games.get(gid).busy:
            time.sleep(0.02)
        st, js, _ = call(srv.port, "POST", f"/games/{gid}/move", {"move": "h8", "visits": 5})
        assert st == 200 and len(js["moves"]) == 2


def test_game_store_expires_idle_games_and_keeps_busy_ones():
    now = [0.0]
    store = GameStore(max_games=2, idle_s=60, clock=lambda: now[0])
    eng = Engine({Rule.FREESTYLE: HeuristicEvaluator()})
    a = store.create(15, 15, Rule.FREESTYLE, BLACK, eng.new_player)
    b = store.create(15, 15, Rule.FREESTYLE, BLACK, eng.new_player)
    with pytest.raises(Exception) as full:
        store.create(15, 15, Rule.FREESTYLE, BLACK, eng.new_player)
    assert getattr(full.value, "status", None) == 503
    now[0] = 50
    store.get(a.id)                     # a request restarts a's idle clock
    store.claim(b.id)                   # b is answering a move: never dropped
    now[0] = 200
    assert store.get(b.id) is b
    with pytest.raises(Exception) as gone:
        store.get(a.id)
    assert getattr(gone.value, "code", None) == "no_such_game"
    assert len(store) == 1
    store.release(b)
    now[0] = 300
    assert len(store) == 0


def test_each_game_has_its_own_bounded_tree():
    eng = Engine({Rule.FREESTYLE: HeuristicEvaluator()}, max_visits=300)
    store = GameStore()
    a = store.create(15, 15, Rule.FREESTYLE, BLACK, lambda b: eng.new_player(b, reuse_tree=True))
    b = store.create(15, 15, Rule.FREESTYLE, BLACK, lambda b: eng.new_player(b, reuse_tree=True))
    assert a.player is not b.player and a.board is not b.board
    assert a.player.reuse_tree and a.player.config.max_nodes == 2000


def test_only_the_games_answered_last_keep_their_trees():
    eng = Engine({Rule.FREESTYLE: HeuristicEvaluator()}, max_visits=50)
    store = GameStore(max_trees=2)
    games = [store.create(15, 15, Rule.FREESTYLE, BLACK,
                          lambda b: eng.new_player(b, reuse_tree=True)) for _ in range(3)]
    lim = parse_limits(30, None, 50, 3000)
    for g in games:
        g.play(g.board.parse("h8"))
        out = eng.move(g.board.copy(), lim, 5, g.player)
        g.board.push(g.board.index(out["x"], out["y"]))
        assert g.player.mcts.tree.root is not None
        store.searched(g)
    assert store.trees() == 2
    assert games[0].player.mcts.tree.root is None          # the oldest forgot its tree
    assert all(g.player.mcts.tree.root is not None for g in games[1:])
    store.claim(games[1].id)                # searching: its tree is kept, the next oldest's is freed
    store.searched(games[0])
    assert games[1].player.mcts.tree.root is not None and store.trees() == 2
    assert games[2].player.mcts.tree.root is None
    store.release(games[1])
    store.searched(games[2])
    assert games[1].player.mcts.tree.root is None and store.trees() == 2
    store.delete(games[0].id)
    assert store.trees() == 1


def test_game_unit_rules():
    eng = Engine({Rule.FREESTYLE: HeuristicEvaluator()})
    board = Board(15)
    g = Game(id="x", board=board, you=WHITE, player=eng.new_player(board))
    with pytest.raises(Exception) as e:
        g.play(board.parse("h8"))       # Black (the engine) is to move
    assert getattr(e.value, "code", None) == "not_your_turn"
    assert g.engine_to_move() and g.status() == "playing"


# ------------------------------------------------------------------------- page and schemas
def test_openapi_publishes_the_request_models(port):
    st, doc, _ = call(port, "GET", "/openapi.json")
    assert st == 200 and doc["openapi"].startswith("3.")
    comps = doc["components"]["schemas"]
    for model in (schema.MoveRequest, schema.AnalyzeRequest, schema.NewGameRequest,
                  schema.GameMoveRequest, schema.MoveAnswer, schema.GameState, schema.ErrorBody):
        assert set(comps[model.__name__]["properties"]) == set(model.model_fields), model
    body = doc["paths"]["/move"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["$ref"].endswith("/MoveRequest")
    assert "HTTPValidationError" not in json.dumps(doc)
    assert {"/health", "/move", "/analyze", "/games", "/games/{game_id}/move"} <= set(doc["paths"])
    st, page, _ = call(port, "GET", "/docs")
    assert st == 200 and b'fetch("/openapi.json")' in page


def test_the_page_and_its_files_are_served_offline(port):
    st, page, hd = call(port, "GET", "/")
    assert st == 200 and hd["content-type"].startswith("text/html")
    assert b"/static/app.js" in page and b"/static/style.css" in page
    for path, ctype in (("/static/app.js", "javascript"), ("/static/style.css", "text/css")):
        st, text, hd = call(port, "GET", path)
        assert st == 200 and ctype in hd["content-type"], (path, hd)
    remote = re.compile(r"""(src|href|action)\s*=\s*["']?(https?:)?//|url\(\s*["']?(https?:)?//|"""
                        r"""@import|fetch\(\s*["'`]https?:|new\s+WebSocket""", re.I)
    for path in ("/", "/static/app.js", "/static/style.css", "/docs"):
        text = call(port, "GET", path)[1].decode()
        assert not remote.search(text), f"{path} loads something remote: {remote.search(text)}"
    st, js, _ = call(port, "GET", "/static/nope.js")
    assert (st, js["error"]) == (404, "not_found")


def test_every_get_route_answers_head_and_a_405_says_what_is_allowed(port):
    game = new_game(port)
    for path in ("/", "/docs", "/static/app.js", f"/games/{game['id']}/sgf"):
        st, body, hd = call(port, "HEAD", path)
        gst, gbody, ghd = call(port, "GET", path)
        assert (st, body, gst) == (200, b"", 200), path
        assert hd["content-type"] == ghd["content-type"], path
        assert hd["content-length"] == ghd["content-length"] == str(len(gbody)), path
    for path in ("/health", f"/games/{game['id']}"):    # JSON whose content may change
        st, body, hd = call(port, "HEAD", path)
        assert (st, body) == (200, b"") and hd["content-type"].startswith("application/json")
        assert int(hd["content-length"]) > 20, path
    for method, path, allow in (("POST", "/static/app.js", "GET, HEAD"), ("PUT", "/", "GET, HEAD"),
                                ("GET", f"/games/{game['id']}/move", "POST"),
                                ("POST", f"/games/{game['id']}", "GET, HEAD, DELETE")):
        st, js, hd = call(port, method, path, {} if method != "GET" else None)
        assert (st, js["error"], hd["allow"]) == (405, "method_not_allowed", allow), (method, path)
    call(port, "DELETE", f"/games/{game['id']}")


def test_a_slow_or_silent_connection_is_closed_and_frees_its_slot():
    import socket
    engine = Engine({Rule.FREESTYLE: HeuristicEvaluator()})
    cfg = serve.ServeConfig(host=HOST, port=0, max_connections=2, io_timeout_s=0.5)
    with serving(cfg, engine) as srv:
        silent = socket.create_connection((HOST, srv.port), timeout=5)  # sends nothing at all
        t0 = time.monotonic()
        out = raw_exchange(srv.port, b"GET /health HTTP/1.1\r\nHost: x\r\n")  # a head that never ends
        assert out.startswith(b"HTTP/1.1 408 ") and b'"status":408' in out
        assert silent.recv(65536) == b""                               # closed, no answer
        assert time.monotonic() - t0 < 4
        silent.close()
        assert call(srv.port, "GET", "/health")[0] == 200               # the slots are free


def test_a_tls_handshake_gets_an_http_400_not_an_http09_body(port):
    hello = bytes.fromhex("16030100a5010000a10303") + bytes(32) + b"\x00\x00\x02\x13\x01\x01\x00"
    out = raw_exchange(port, hello)
    assert out.startswith(b"HTTP/1.1 400 ") and b'"status":400' in out, out[:80]


def test_serve_without_the_web_extra_says_how_to_install_it(monkeypatch, capsys):
    from tools.cli import build_parser
    args = build_parser().parse_args(["serve", "--port", "0"])
    monkeypatch.setitem(sys.modules, "uvicorn", None)   # import uvicorn -> ImportError
    assert serve.run(args) == 2
    assert "pip install -e '.[web]'" in capsys.readouterr().err
