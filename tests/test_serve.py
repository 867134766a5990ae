"""``gomoku serve``: the real HTTP server on a loopback port (port 0), in a thread of this process.

Small visit counts throughout; the 503 path uses an evaluator that blocks until the test releases
it.
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from gomoku_ai import __version__
from gomoku_ai.board import Board
from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.testplayers import GateEvaluator
from gomoku_ai.renju import is_forbidden
from gomoku_ai.rules import Rule
from tools.serve import app as serve
from tools.serve.engine import MIN_SEARCH_MS, Engine
from tools.serve.request import parse_limits

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"


def call(port: int, method: str, path: str, body: Any = None, raw: Optional[bytes] = None,
         headers: Optional[Dict[str, str]] = None,
         conn: Optional[http.client.HTTPConnection] = None,
         ) -> Tuple[int, Dict[str, Any], Dict[str, str]]:
    own = conn is None
    c = conn or http.client.HTTPConnection(HOST, port, timeout=20)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    try:
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        text = r.read()
        payload = json.loads(text) if text else {}
        return r.status, payload, {k.lower(): v for k, v in r.getheaders()}
    finally:
        if own:
            c.close()


def raw_exchange(port: int, data: bytes, wait_s: float = 5.0) -> bytes:
    """Send raw bytes, read until the server closes (or ``wait_s``)."""
    with socket.create_connection((HOST, port), timeout=wait_s) as s:
        s.sendall(data)
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    return out


def _default_net() -> dict:
    """The description (json) of the network the shipped index gives freestyle on 15x15 (the
    requests' default board), resolved as the server resolves it (``freestyle@15x15`` first)."""
    from gomoku_ai.rules import Rule
    from gomoku_ai.shipped import default_model
    base = default_model(Rule.FREESTYLE, 15)
    assert base is not None, "no shipped model for freestyle 15x15"
    return json.loads(base.with_name(base.name + ".json").read_text())


DEFAULT_NET = _default_net()
DEFAULT_TAG = f"model={DEFAULT_NET['name']}@{DEFAULT_NET['version']}"


@pytest.fixture(scope="module")
def server():
    cfg = serve.ServeConfig(host=HOST, port=0, workers=2, queue=64, max_visits=400,
                            max_time_ms=3000)
    srv, t = serve.start_background(cfg)
    yield srv
    srv.shutdown()
    srv.server_close()
    t.join(timeout=5)


@pytest.fixture(scope="module")
def port(server):
    return server.port


# ------------------------------------------------------------------------------------- health
def test_health(port):
    st, js, hd = call(port, "GET", "/health")
    assert st == 200 and hd["content-type"].startswith("application/json")
    meta = DEFAULT_NET
    assert js["status"] == "ok"
    assert js["engine_version"] == __version__
    assert js["model"]["name"] == meta["name"]
    assert js["model"]["version"] == meta["version"]
    assert js["model"]["sha256"] == meta["sha256"]
    assert set(js["models"]) == {"freestyle", "standard", "renju", "caro"}
    assert js["limits"]["max_visits"] == 400


# ------------------------------------------------------------------------------------- moves
RENJU_D3 = ["g8", "a1", "h8", "a3", "i6", "a5", "i7", "a7"]  # Black to move; i8 is a double-three


def test_win_in_one_move_list(port):
    st, js, _ = call(port, "POST", "/move",
                     {"moves": ["h8", "a1", "i8", "c1", "j8", "e1", "k8", "g1"], "visits": 50})
    assert st == 200, js
    assert js["move"] in ("g8", "l8") and js["y"] == 7 and js["x"] in (6, 11)
    assert js["value"] == 1.0 and js["side_to_move"] == "black"
    assert js["pv"][0]["move"] == js["move"]
    assert js["candidates"][0]["move"] == js["move"]


def test_block_four_board_form(port):
    grid = [[0] * 15 for _ in range(15)]
    for x in (7, 8, 9, 10):
        grid[7][x] = 1             # black h8..k8
    grid[7][6] = 2                 # white g8 blocks one end
    grid[0][0] = grid[14][14] = 2  # 4 black, 3 white: White to move
    st, js, _ = call(port, "POST", "/move", {"board": grid, "visits": 50, "top": 3})
    assert st == 200, js
    assert (js["x"], js["y"], js["move"]) == (11, 7, "l8")
    assert js["side_to_move"] == "white"


def test_search_answer_shape_and_clamp(port):
    st, js, _ = call(port, "POST", "/move", {"moves": [[7, 7], [8, 8]], "visits": 60,
                                             "time_ms": 10 ** 9, "top": 4})
    assert st == 200, js
    assert js["source"] == "mcts" and js["visits"] <= 60
    assert js["limits"]["clamped"] == ["time_ms"] and js["limits"]["time_ms"] == 3000
    assert 1 <= len(js["candidates"]) <= 4
    assert abs(sum(c["probability"] for c in js["candidates"])) <= 1.0 + 1e-6
    assert -1.0 <= js["value"] <= 1.0 and js["winrate"] == pytest.approx((js["value"] + 1) / 2,
                                                                         abs=1e-3)
    occupied = {(7, 7), (8, 8)}
    assert (js["x"], js["y"]) not in occupied
    assert [p["move"] for p in js["pv"]][0] == js["move"]
    assert js["model"]["name"] == DEFAULT_NET["name"]


def _policy_best(port: int, body: Dict[str, Any]) -> Dict[str, Any]:
    """The network's best legal move for a position, by ``/analyze``."""
    st, an, _ = call(port, "POST", "/analyze", {k: v for k, v in body.items()
                                                if k in ("moves", "board", "rule", "size")})
    assert st == 200, an
    return an["top"][0]


@pytest.mark.parametrize("body", [
    {"moves": ["h8", "a1"], "time_ms": 0.01},
    {"moves": ["h8"], "time_ms": 1},
    {"moves": ["h8"], "time_ms": 1, "visits": 300},
    {"moves": RENJU_D3, "rule": "renju", "time_ms": 0.5},
])
def test_too_short_a_time_answers_the_policy(port, body):
    """Below the floor no search runs: the policy's best legal move, said to be so (before: an
    arbitrary square with 0 visits, b1 and f6 for the first two)."""
    st, js, _ = call(port, "POST", "/move", body)
    assert st == 200, js
    best = _policy_best(port, body)
    assert js["source"] == "policy" and js["visits"] == 0
    assert js["move"] == best["move"] and (js["x"], js["y"]) == (best["x"], best["y"])
    assert js["candidates"] == [{"x": best["x"], "y": best["y"], "move": best["move"],
                                 "probability": 1.0, "visits": 0, "q": js["value"],
                                 "prior": best["probability"]}]
    assert js["pv"] == [{"x": best["x"], "y": best["y"], "move": best["move"]}]
    assert -1.0 <= js["value"] <= 1.0 and js["value"] != 0.0   # the network's value
    if body.get("rule") == "renju":
        assert js["move"] != "i8"          # the forbidden double-three


WIN_IN_ONE = ["h8", "a1", "i8", "c1", "j8", "e1", "k8", "g1"]
OPEN_THREE = ["h8", "a1", "i8", "a3", "j8", "a5"]     # Black to move: a VCF (an open four)


def test_too_short_a_time_still_plays_tactics(port):
    st, js, _ = call(port, "POST", "/move", {"moves": WIN_IN_ONE, "time_ms": 0.01})
    assert st == 200 and js["source"] == "win1" and js["move"] in ("g8", "l8"), js
    grid = [[0] * 15 for _ in range(15)]
    for x in (7, 8, 9, 10):
        grid[7][x] = 1             # black h8..k8, blocked at g8
    grid[7][6] = 2
    grid[0][0] = grid[14][14] = 2
    st, js, _ = call(port, "POST", "/move", {"board": grid, "time_ms": 0.01})
    assert st == 200 and (js["source"], js["move"]) == ("block5", "l8"), js
    st, js, _ = call(port, "POST", "/move", {"moves": OPEN_THREE, "time_ms": 0.01})
    assert st == 200 and js["source"] == "vcf" and js["move"] in ("g8", "k8"), js
    assert js["proven"] == 1 and js["value"] == 1.0 and js["pv"][0]["move"] == js["move"]


class SlowEvaluator(HeuristicEvaluator):
    """Every evaluation takes ``delay_s``: a search with less time visits nothing (its clock is
    read after the root's evaluation, as it is with the shipped network's batches of 4)."""

    batch_size = 4

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    def evaluate(self, items, shape):
        time.sleep(self.delay_s)
        return super().evaluate(items, shape)


def test_a_search_that_visited_nothing_answers_the_policy():
    """Above the floor, a search that ran out of time before its first visit (a slow network, a
    loaded machine) answers the policy's move too, not the first square of the root."""
    time_ms = 3 * MIN_SEARCH_MS
    engine = Engine({Rule.FREESTYLE: SlowEvaluator(2 * time_ms / 1000.0)})
    cfg = serve.ServeConfig(host=HOST, port=0, workers=1, queue=2, max_visits=50,
                            max_time_ms=2000)
    srv, t = serve.start_background(cfg, engine)
    try:
        st, js, _ = call(srv.port, "POST", "/move", {"moves": ["h8", "a1"], "time_ms": time_ms})
        assert st == 200, js
        best = _policy_best(srv.port, {"moves": ["h8", "a1"]})
        assert (js["source"], js["visits"], js["move"]) == ("policy", 0, best["move"])
        assert js["elapsed_ms"] >= time_ms
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(timeout=5)


@pytest.mark.parametrize("rule,expected", [
    (0, "freestyle"), (1, "standard"), (4, "renju"), (8, "caro"), (5, "renju"),
    ("4", "renju"), ("renju", "renju"), ("Standard", "standard"),
])
def test_rule_as_gomocup_code_or_name(port, rule, expected):
    st, js, _ = call(port, "POST", "/move", {"moves": ["h8"], "rule": rule, "visits": 5})
    assert (st, js.get("rule")) == (200, expected), js
    st, js, _ = call(port, "POST", "/analyze", {"moves": ["h8"], "rule": rule})
    assert (st, js.get("rule")) == (200, expected), js


@pytest.mark.parametrize("rule,word", [
    (True, "boolean"), (False, "boolean"), (4.0, "number"), (-1, "negative"), ([4], "list"),
    (None, "null"), ("chess", "unknown rule"),
])
def test_bad_rule_type_is_a_clear_400(port, rule, word):
    st, js, _ = call(port, "POST", "/move", {"moves": ["h8"], "rule": rule, "visits": 5})
    assert (st, js["error"]) == (400, "bad_rule"), js
    assert word in js["message"], js["message"]


def test_head_on_get_routes(port):
    st, js, hd = call(port, "GET", "/health")
    hst, hjs, hhd = call(port, "HEAD", "/health")
    assert (hst, hjs) == (200, {})
    assert hhd["content-type"] == hd["content-type"] and int(hhd["content-length"]) > 0
    out = raw_exchange(port, b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, sep, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and sep and body == b""
    st, _, hd = call(port, "HEAD", "/move")
    assert st == 405 and hd["allow"] == "POST"
    assert call(port, "HEAD", "/nope")[0] == 404
    c = http.client.HTTPConnection(HOST, port, timeout=20)   # HEAD keeps a connection in step
    try:
        assert call(port, "HEAD", "/health", conn=c)[0] == 200
        assert call(port, "GET", "/health", conn=c)[1]["status"] == "ok"
    finally:
        c.close()


def test_limits_clamp_unit():
    lim = parse_limits(10 ** 9, None, max_visits=500, max_time_ms=1000)
    assert (lim.visits, lim.time_ms, lim.clamped) == (500, 1000.0, ["visits"])
    lim = parse_limits(None, None, max_visits=5000, max_time_ms=1000)
    assert lim.visits == 800 and lim.clamped == []




def test_renju_never_forbidden(port):
    b = Board(15, rule=Rule.RENJU)
    for mv in RENJU_D3:
        b.play(b.parse(mv))
    assert is_forbidden(b, b.parse("i8"))
    st, js, _ = call(port, "POST", "/move", {"moves": RENJU_D3, "rule": "renju", "visits": 60,
                                             "top": 25})
    assert st == 200, js
    assert js["move"] != "i8" and "i8" not in {c["move"] for c in js["candidates"]}
    assert not is_forbidden(b, b.index(js["x"], js["y"]))
    st, an, _ = call(port, "POST", "/analyze", {"moves": RENJU_D3, "rule": "renju", "top": 25})
    assert st == 200
    assert "i8" in an["forbidden"] and an["policy"][7][8] == 0.0
    assert "i8" not in {t["move"] for t in an["top"]}


def test_analyze_shape(port):
    st, js, _ = call(port, "POST", "/analyze", {"moves": ["h8", "i9"], "top": 3})
    assert st == 200, js
    pol = js["policy"]
    assert len(pol) == 15 and all(len(r) == 15 for r in pol)
    assert sum(map(sum, pol)) == pytest.approx(1.0, abs=1e-3)
    assert pol[7][7] == 0.0 and pol[8][8] == 0.0           # occupied squares
    assert -1.0 <= js["value"] <= 1.0 and len(js["top"]) == 3
    st, js, _ = call(port, "POST", "/analyze", {"moves": ["h8"], "size": [20, 15]})
    assert st == 200 and len(js["policy"]) == 15 and len(js["policy"][0]) == 20


def test_the_shipped_model_is_chosen_by_board_size(port):
    st, js, _ = call(port, "POST", "/analyze", {"moves": ["d4"], "size": 8})
    assert st == 200 and js["model"]["name"] == "gomoku8-4x32"
    st, js, _ = call(port, "POST", "/move", {"moves": ["d4"], "size": 8, "visits": 50})
    assert st == 200 and js["model"]["name"] == "gomoku8-4x32"
    st, js, _ = call(port, "POST", "/analyze", {"moves": ["h8"], "size": 15})
    assert st == 200 and js["model"]["name"] == DEFAULT_NET["name"]


# ------------------------------------------------------------------------------------- errors
FULL_5x5 = [[1, 1, 1, 2, 1], [2, 2, 1, 1, 1], [1, 1, 2, 2, 2], [1, 2, 2, 1, 1], [2, 2, 2, 2, 1]]


def _grid(stones: Dict[Tuple[int, int], int], n: int = 15):
    g = [[0] * n for _ in range(n)]
    for (x, y), c in stones.items():
        g[y][x] = c
    return g


WON = _grid({**{(x, 7): 1 for x in range(3, 8)}, **{(x, 0): 2 for x in (0, 2, 4, 6)}})

BAD_BODIES = [
    # (body, status, error code)
    ([1, 2], 400, "bad_body"),
    ({"moves": ["h8"], "colour": "x"}, 400, "unknown_key"),
    ({}, 400, "bad_position"),
    ({"moves": ["h8"], "board": _grid({})}, 400, "bad_position"),
    ({"board": [[0] * 15] * 14 + [[0] * 14]}, 400, "bad_board"),
    ({"board": [[0] * 3] * 3}, 400, "bad_board"),
    ({"board": "....."}, 400, "bad_board"),
    ({"board": _grid({(7, 7): 3})}, 400, "bad_cell"),
    ({"board": [[0] * 14 + ["1"]] + [[0] * 15] * 14}, 400, "bad_cell"),
    ({"board": [[0] * 14 + [True]] + [[0] * 15] * 14}, 400, "bad_cell"),
    ({"board": _grid({(7, 7): 1, (8, 8): 1})}, 422, "stone_count"),
    ({"board": _grid({(7, 7): 2})}, 422, "stone_count"),
    ({"board": _grid({(7, 7): 1}), "side_to_move": "black"}, 422, "stone_count"),
    ({"board": _grid({(7, 7): 1, (8, 8): 2}), "side_to_move": "white"}, 422, "stone_count"),
    ({"board": WON}, 422, "game_over"),
    ({"board": FULL_5x5}, 422, "board_full"),
    ({"moves": ["h8", "h8"]}, 422, "illegal_move"),
    ({"moves": ["h8", [7, 7]]}, 422, "illegal_move"),
    ({"moves": ["z99"]}, 422, "illegal_move"),
    ({"moves": [[15, 0]]}, 422, "illegal_move"),
    ({"moves": [[-1, 0]]}, 422, "illegal_move"),
    ({"moves": ["hello"]}, 400, "bad_move"),
    ({"moves": [[1, 2, 3]]}, 400, "bad_move"),
    ({"moves": "h8 i9"}, 400, "bad_moves"),
    ({"moves": ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1", "e2"]}, 422, "game_over"),
    ({"moves": ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1"]}, 422, "game_over"),
    ({"moves": RENJU_D3 + ["i8"], "rule": "renju"}, 422, "forbidden_move"),
    ({"moves": ["h8"], "side_to_move": "black"}, 422, "side_to_move_mismatch"),
    ({"moves": ["h8"], "side_to_move": "red"}, 400, "bad_side_to_move"),
    ({"moves": ["h8"], "rule": "chess"}, 400, "bad_rule"),
    ({"moves": ["h8"], "size": 40}, 400, "bad_size"),
    ({"moves": ["h8"], "top": 100}, 400, "bad_top"),
    ({"moves": ["h8"], "visits": -5}, 400, "bad_limit"),
    ({"moves": ["h8"], "visits": 0}, 400, "bad_limit"),
    ({"moves": ["h8"], "visits": "100"}, 400, "bad_limit"),
    ({"moves": ["h8"], "visits": True}, 400, "bad_limit"),
    ({"moves": ["h8"], "visits": 2.5}, 400, "bad_limit"),
    ({"moves": ["h8"], "time_ms": 0}, 400, "bad_limit"),
    ({"moves": ["h8"], "time_ms": -1.5}, 400, "bad_limit"),
]


@pytest.mark.parametrize("body,status,code", BAD_BODIES)
def test_bad_input(port, body, status, code):
    st, js, hd = call(port, "POST", "/move", body)
    assert (st, js.get("error")) == (status, code), js
    assert js["status"] == status and js["message"]
    assert hd["content-type"].startswith("application/json")


def test_analyze_validates_too(port):
    st, js, _ = call(port, "POST", "/analyze", {"board": WON})
    assert (st, js["error"]) == (422, "game_over")
    st, js, _ = call(port, "POST", "/analyze", {"moves": ["h8"], "visits": 10})
    assert (st, js["error"]) == (400, "unknown_key")


@pytest.mark.parametrize("raw,status,code", [
    (b"{not json", 400, "bad_json"),
    (b'{"moves": ["h8"], "visits": NaN}', 400, "bad_json"),
    (b"[" * 20000 + b"]" * 20000, 400, "bad_json"),
    (b"\xff\xfe{}", 400, "bad_json"),
    (b"", 400, "bad_json"),
])
def test_malformed_json(port, raw, status, code):
    st, js, _ = call(port, "POST", "/move", raw=raw)
    assert (st, js["error"]) == (status, code)


def test_content_type(port):
    st, js, _ = call(port, "POST", "/move", {"moves": ["h8"]},
                     headers={"Content-Type": "text/plain"})
    assert (st, js["error"]) == (415, "unsupported_media_type")
    st, js, _ = call(port, "POST", "/move", {"moves": ["h8"], "visits": 5},
                     headers={"Content-Type": "application/json; charset=utf-8"})
    assert st == 200
    st, js, _ = call(port, "POST", "/move", {"moves": ["h8"]},
                     headers={"Content-Type": "application/json; charset=latin-1"})
    assert st == 415


def test_paths_and_methods(port):
    assert call(port, "GET", "/nope")[0] == 404
    assert call(port, "POST", "/nope", {"a": 1})[0] == 404
    st, js, hd = call(port, "GET", "/move")
    assert (st, js["error"], hd["allow"]) == (405, "method_not_allowed", "POST")
    st, _, hd = call(port, "POST", "/health", {})
    assert st == 405 and hd["allow"] == "GET, HEAD"
    assert call(port, "DELETE", "/analyze")[0] == 405
    assert call(port, "BREW", "/move")[0] == 405
    assert call(port, "GET", "/health?verbose=1")[0] == 200


def test_body_too_large_and_length_required(port):
    out = raw_exchange(port, b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 10000000\r\n\r\n{")
    assert out.startswith(b"HTTP/1.1 413 ") and b"body_too_large" in out
    out = raw_exchange(port, b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             b"\r\n")
    assert out.startswith(b"HTTP/1.1 411 ")
    out = raw_exchange(port, b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 411 ")
    out = raw_exchange(port, b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Length: -4\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 400 ")
    out = raw_exchange(port, b"garbage\r\n\r\n")   # HTTP/0.9 style: a JSON body, no status line
    assert b'"status":400' in out
    out = raw_exchange(port, b"GET /health HTTP/1.1\r\nHost: x\r\nX: " + b"y" * 70000 + b"\r\n\r\n")
    assert out.split(b" ", 2)[1] in (b"431", b"400")
    # a 64 KiB + 1 body, really sent
    big = json.dumps({"moves": ["h8"], "pad": "x" * (64 * 1024)}).encode()
    try:
        st, js, _ = call(port, "POST", "/move", raw=big)
        assert st == 413
    except (ConnectionResetError, BrokenPipeError):
        pass  # the server may close before the client has written everything


def test_slow_body_times_out(server, port):
    old = server.cfg.io_timeout_s
    server.cfg.io_timeout_s = 0.5
    try:
        t0 = time.monotonic()
        out = raw_exchange(port, b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                                 b"\r\nContent-Length: 100\r\n\r\n{\"moves\"")
        assert out.startswith(b"HTTP/1.1 408 ") and time.monotonic() - t0 < 4
    finally:
        server.cfg.io_timeout_s = old


def test_keep_alive_stays_in_step(port):
    c = http.client.HTTPConnection(HOST, port, timeout=20)
    try:
        assert call(port, "GET", "/health", conn=c)[0] == 200
        assert call(port, "POST", "/nope", {"x": 1}, conn=c)[0] == 404
        assert call(port, "GET", "/move", raw=b'{"x": 1}', conn=c)[0] == 405
        assert call(port, "POST", "/move", {"moves": ["h8"], "visits": 0}, conn=c)[0] == 400
        assert call(port, "POST", "/move", {"moves": ["h8"]}, conn=c,
                    headers={"Content-Type": "text/plain"})[0] == 415
        st, js, _ = call(port, "POST", "/move", {"moves": ["h8"], "visits": 5}, conn=c)
        assert st == 200 and js["move"] != "h8"
    finally:
        c.close()


# ------------------------------------------------------------------------------------- load
def test_concurrent_requests(port):
    win = {"moves": ["h8", "a1", "i8", "c1", "j8", "e1", "k8", "g1"], "visits": 20}
    opening = {"moves": ["h8", "i9", "h9"], "visits": 20}

    def one(i: int):
        body = win if i % 2 == 0 else opening
        return i, call(port, "POST", "/move", body)

    with ThreadPoolExecutor(50) as ex:
        results = list(ex.map(one, range(50), timeout=60))
    assert len(results) == 50
    answers = set()
    for i, (st, js, _) in results:
        assert st == 200, js
        if i % 2 == 0:
            assert js["move"] in ("g8", "l8")
        else:
            assert js["move"] not in ("h8", "i9", "h9")
            answers.add(js["move"])
    assert len(answers) == 1   # stateless, seed 0: the same request gets the same answer


def test_503_when_queue_full():
    ev = GateEvaluator()
    engine = Engine({Rule.FREESTYLE: ev})
    cfg = serve.ServeConfig(host=HOST, port=0, workers=1, queue=1, max_visits=50,
                            max_time_ms=2000)
    srv, t = serve.start_background(cfg, engine)
    try:
        body = {"moves": ["h8"], "visits": 3}
        with ThreadPoolExecutor(2) as ex:
            a = ex.submit(call, srv.port, "POST", "/move", body)
            assert ev.entered.wait(10)
            b = ex.submit(call, srv.port, "POST", "/move", body)
            end = time.monotonic() + 10
            while srv.pool.in_flight < 2 and time.monotonic() < end:
                time.sleep(0.01)
            assert srv.pool.in_flight == 2
            st, js, hd = call(srv.port, "POST", "/move", body)
            assert (st, js["error"]) == (503, "busy") and hd["retry-after"] == "1"
            assert call(srv.port, "GET", "/health")[0] == 200   # health is not queued
            ev.gate.set()
            assert a.result(timeout=20)[0] == 200
            assert b.result(timeout=20)[0] == 200
        st, js, _ = call(srv.port, "POST", "/move", body)
        assert st == 200
    finally:
        ev.gate.set()
        srv.shutdown()
        srv.server_close()
        t.join(timeout=5)


def test_503_too_many_connections():
    engine = Engine({Rule.FREESTYLE: HeuristicEvaluator()})
    cfg = serve.ServeConfig(host=HOST, port=0, max_connections=2, max_visits=10)
    srv, t = serve.start_background(cfg, engine)
    held = []
    try:
        for _ in range(2):
            c = http.client.HTTPConnection(HOST, srv.port, timeout=10)
            assert call(srv.port, "GET", "/health", conn=c)[0] == 200   # kept alive
            held.append(c)
        out = raw_exchange(srv.port, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert out.startswith(b"HTTP/1.1 503 ")
        held.pop().close()
        end = time.monotonic() + 5
        st = 0
        while time.monotonic() < end and st != 200:
            try:
                st = call(srv.port, "GET", "/health")[0]
            except (ConnectionError, http.client.HTTPException):
                st = 0
            if st != 200:
                time.sleep(0.05)
        assert st == 200
    finally:
        for c in held:
            c.close()
        srv.shutdown()
        srv.server_close()
        t.join(timeout=5)


# ------------------------------------------------------------------------------- logging / cli
def test_requests_are_logged(port, caplog):
    with caplog.at_level("INFO", logger="gomoku.serve"):
        call(port, "POST", "/move", {"moves": ["h8"], "visits": 5})
        call(port, "POST", "/move", {"moves": ["h8"], "visits": -1})

        def logged() -> List[str]:
            return [r.getMessage() for r in caplog.records if r.name == "gomoku.serve"]

        end = time.monotonic() + 5.0   # the access line is written after the reply has gone out
        while time.monotonic() < end and not (any("POST /move 200" in m for m in logged()) and
                                              any("POST /move 400" in m for m in logged())):
            time.sleep(0.01)
    lines = logged()
    assert any("POST /move 200" in m and DEFAULT_TAG in m for m in lines), lines
    assert any("POST /move 400" in m and "bad_limit" in m for m in lines), lines


def test_cli_serve_subprocess(tmp_path):
    from tools.cli import build_parser
    args = build_parser().parse_args(["serve", "--port", "0", "--workers", "1"])
    assert args.command == "serve" and args.workers == 1
    logf = tmp_path / "serve.log"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.Popen([sys.executable, "-m", "tools.cli", "serve", "--port", "0",
                          "--max-visits", "50", "--log-file", str(logf)], cwd=str(ROOT), env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        port = None
        end = time.monotonic() + 15
        while port is None and time.monotonic() < end and p.poll() is None:
            text = logf.read_text() if logf.exists() else ""
            if "listening on http://127.0.0.1:" in text:
                port = int(text.split("listening on http://127.0.0.1:")[1].split()[0])
            else:
                time.sleep(0.05)
        assert port, (p.poll(), p.stderr.read() if p.poll() is not None else b"")
        st, js, _ = call(port, "POST", "/move", {"moves": ["h8"], "visits": 10000})
        assert st == 200 and js["limits"] == {"visits": 50, "time_ms": 10000.0,
                                              "clamped": ["visits"]}
        p.terminate()
        assert p.wait(timeout=10) == 0
        text = logf.read_text()
        assert "version=0" in text and "POST /move 200" in text
        assert DEFAULT_TAG in text
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=5)
        p.stderr.close()


@pytest.mark.parametrize("rule", ["-1", "\u0664", "4.0", " 4x"])
def test_a_rule_string_must_be_a_name_or_ascii_digits(port, rule):
    st, js, _ = call(port, "POST", "/move", {"moves": ["h8"], "rule": rule, "visits": 5})
    assert (st, js["error"]) == (400, "bad_rule"), js
