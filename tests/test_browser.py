"""The board page of ``gomoku serve`` in a real headless browser: the system's Chromium (Debian's
``chromium`` package), driven by Playwright (Playwright's own browser download is never used).

``make test`` installs Chromium when it can (``make browser``); where there is none, every test
here is skipped with the reason. The engine is the heuristic evaluator with a few visits, so a
game to a five takes seconds.
"""
from __future__ import annotations

import http.client
import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from gomoku_ai.evaluator import HeuristicEvaluator
from gomoku_ai.records import read_sgf
from gomoku_ai.rules import Rule
from tools.serve import app as serve
from tools.serve.engine import Engine

HOST = "127.0.0.1"
#: far from the centre: a "human" who never attacks, so the engine wins soon
PASSIVE = [(x, y) for y in (0, 14) for x in range(15)] + [(0, y) for y in range(1, 14)]
RENJU_D3 = ["h8", "a1", "g8", "a3", "i9", "a5", "i10", "a7"]   # i8 is a double-three for Black
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]


def chromium_path() -> Optional[str]:
    """$CHROMIUM, else the system's ``chromium`` on PATH, else None."""
    env = os.environ.get("CHROMIUM")
    if env and Path(env).is_file():
        return env
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _why_not() -> Optional[str]:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (it is in the dev extra: pip install -e '.[dev]')"
    if chromium_path() is None:
        return ("no Chromium here: install Debian's package (apt-get install chromium, which "
                "`make browser` does as root) or set CHROMIUM to a Chromium binary")
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    cfg = serve.ServeConfig(host=HOST, port=0, workers=2, queue=8, max_visits=50,
                            max_time_ms=3000)
    srv, t = serve.start_background(cfg, Engine({Rule.FREESTYLE: HeuristicEvaluator()}))
    yield srv
    srv.shutdown()
    srv.server_close()
    t.join(timeout=5)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser: Any, server: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1100, "height": 800}, accept_downloads=True)
    pg = ctx.new_page()
    errors: List[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # Chromium logs every 4xx/5xx answer to fetch() as "Failed to load resource": those are the
    # refusals the tests ask for, not the page's errors
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and
          not m.text.startswith("Failed to load resource") else None)
    pg.set_default_timeout(20000)
    yield pg
    ctx.close()
    assert not errors, f"errors in the page: {errors}"


def url(server: Any, path: str = "/") -> str:
    return f"http://{HOST}:{server.port}{path}"


def api(server: Any, method: str, path: str, body: Any = None) -> Tuple[int, Any]:
    c = http.client.HTTPConnection(HOST, server.port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        c.request(method, path, body=data,
                  headers={"Content-Type": "application/json"} if data is not None else {})
        r = c.getresponse()
        raw = r.read()
        return r.status, json.loads(raw) if raw else None
    finally:
        c.close()


def ready(pg: Any) -> None:
    """Wait until the page is idle (no request to the engine in flight) with a board drawn."""
    pg.wait_for_selector("#board .pt")
    pg.wait_for_function("!document.body.hasAttribute('data-busy')")


def open_board(pg: Any, server: Any, strength: str = "visits:50", **form: str) -> None:
    """Load the page and start a game with the form's values (``rule="renju"``, ...)."""
    pg.goto(url(server))
    ready(pg)
    pg.select_option("#strength", strength)
    for key, value in form.items():
        pg.select_option(f"#{key}", value)
    pg.click("#new-game")
    ready(pg)


def stones(pg: Any) -> List[Dict[str, Any]]:
    return pg.eval_on_selector_all(
        "#board .stone", "els => els.map(e => ({x: +e.dataset.x, y: +e.dataset.y, "
                         "color: e.classList.contains('black') ? 'black' : 'white', "
                         "win: e.classList.contains('win')}))")


def click_point(pg: Any, x: int, y: int) -> None:
    pg.click(f'#board .pt[data-x="{x}"][data-y="{y}"]', force=True)
    ready(pg)


def game_id(pg: Any) -> str:
    href = pg.get_attribute("#dl-sgf", "href") or ""
    assert "/games/" in href, href
    return href.split("/games/")[1].split("/")[0]


# ------------------------------------------------------------------------------------ tests
def test_play_a_game_to_a_five_then_download_its_sgf(page: Any, server: Any,
                                                     tmp_path: Path) -> None:
    open_board(page, server)
    assert stones(page) == []
    for x, y in PASSIVE:
        if "wins" in (page.text_content("#status") or ""):
            break
        if any((s["x"], s["y"]) == (x, y) for s in stones(page)):
            continue
        before = len(stones(page))
        click_point(page, x, y)
        after = stones(page)
        assert len(after) in (before + 1, before + 2)   # yours, and the reply unless it ended
        assert {"x": x, "y": y, "color": "black"} in [
            {k: s[k] for k in ("x", "y", "color")} for s in after]
    status = page.text_content("#status") or ""
    assert "White wins" in status, status
    assert sum(s["win"] for s in stones(page)) >= 5
    # the move list shows every move
    assert page.locator("#moves li").count() == len(stones(page))
    with page.expect_download() as dl:
        page.click("#dl-sgf")
    path = tmp_path / "game.sgf"
    dl.value.save_as(path)
    rec = read_sgf(path)
    st, state = api(server, "GET", f"/games/{game_id(page)}")
    assert st == 200
    assert rec.moves == [(m["x"], m["y"]) for m in state["moves"]]
    assert {(x, y) for x, y in rec.moves} == {(s["x"], s["y"]) for s in stones(page)}
    assert rec.result is not None and rec.result.winner == 2


def test_undo_takes_back_two_stones(page: Any, server: Any) -> None:
    open_board(page, server)
    click_point(page, 7, 7)
    click_point(page, 0, 0)
    assert len(stones(page)) == 4
    page.click("#undo")
    ready(page)
    assert len(stones(page)) == 2
    assert {"x": 7, "y": 7, "color": "black", "win": False} in stones(page)


def test_analysis_overlay_toggles(page: Any, server: Any) -> None:
    open_board(page, server)
    click_point(page, 7, 7)
    assert page.locator("#board .heat").count() == 0
    page.check("#overlay")
    page.wait_for_selector("#board .heat")
    assert page.is_visible("#winrate")
    assert "%" in (page.text_content("#winrate") or "")
    page.select_option("#overlay-kind", "policy")
    page.wait_for_function("document.querySelectorAll('#board .heat').length > 3")
    ready(page)
    page.uncheck("#overlay")
    page.wait_for_function("document.querySelectorAll('#board .heat').length === 0")
    assert page.locator("#board .pv").count() == 0
    assert not page.is_visible("#winrate")


def test_a_forbidden_renju_point_is_refused_on_screen(page: Any, server: Any) -> None:
    open_board(page, server, rule="renju")
    gid = game_id(page)
    board = server.games.get(gid).board   # the position is set on the server: see test_serve_games
    for mv in RENJU_D3:
        board.push(board.parse(mv))
    page.reload()                          # the page resumes its game (the id is in the URL)
    ready(page)
    assert len(stones(page)) == len(RENJU_D3)
    page.wait_for_selector("#board .forbidden")
    click_point(page, 8, 7)                # i8
    status = page.text_content("#status") or ""
    assert "forbidden" in status and "double-three" in status, status
    assert len(stones(page)) == len(RENJU_D3)
    click_point(page, 12, 12)              # a legal move is still played
    assert len(stones(page)) == len(RENJU_D3) + 2


def test_the_keyboard_plays_at_the_cursor(page: Any, server: Any) -> None:
    open_board(page, server)
    page.focus("#board")
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    ready(page)
    assert {"x": 6, "y": 6, "color": "black", "win": False} in stones(page)
    page.keyboard.press("u")
    ready(page)
    assert stones(page) == []


def test_a_20x20_board_and_a_phone_screen(browser: Any, server: Any) -> None:
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                              has_touch=True)
    pg = ctx.new_page()
    try:
        pg.goto(url(server))
        ready(pg)
        pg.select_option("#size", "20")
        pg.select_option("#strength", "visits:50")
        pg.click("#new-game")
        ready(pg)
        assert pg.locator("#board .pt").count() == 400
        box = pg.locator("#board").bounding_box()
        assert box is not None and box["width"] <= 390
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390   # no sideways scroll
        # a touch screen: the first tap only shows the stone, the second plays it
        pg.tap('#board .pt[data-x="19"][data-y="0"]')
        assert pg.locator('#board .preview[data-x="19"][data-y="0"]').count() == 1
        assert "tap again" in (pg.text_content("#status") or "")
        pg.tap('#board .pt[data-x="18"][data-y="1"]')     # another point: the preview moves
        ready(pg)
        assert pg.locator("#board .stone").count() == 0
        assert pg.locator('#board .preview[data-x="18"][data-y="1"]').count() == 1
        pg.tap('#board .pt[data-x="18"][data-y="1"]')
        ready(pg)
        assert pg.locator("#board .stone").count() == 2
        assert pg.locator("#board .preview").count() == 0
    finally:
        ctx.close()


def test_new_game_pressed_again_and_again_leaves_one_game(page: Any, server: Any) -> None:
    import time
    before = len(server.games)
    open_board(page, server)          # a first game, then New game: the first is deleted
    page.focus("#board")
    for _ in range(10):               # `n` as fast as keys go (an empty game: no question)
        page.keyboard.press("n")
    ready(page)
    end = time.monotonic() + 5
    while len(server.games) != before + 1 and time.monotonic() < end:
        time.sleep(0.05)              # the page deletes the game it replaced
    assert len(server.games) == before + 1
    assert server.games.get(game_id(page)) is not None
