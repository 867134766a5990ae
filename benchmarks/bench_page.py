"""First load of ``gomoku serve``'s board page in headless Chromium (the system's, driven by
Playwright): the time from navigation until the page has its game and is idle, cold (a new browser
context each time: no cache), over ``--runs`` loads. Starts the service in-process on a free
loopback port with the shipped models. Prints one JSON object (times in ms, sizes in bytes).

    .venv/bin/python benchmarks/bench_page.py [--runs 10] [--screenshot docs/serve-board.png]

``--screenshot`` also saves a picture of the page after a few moves with the analysis overlay on
(the README's).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tools.serve import app as serve  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-dev-shm-usage"]
IDLE = "document.querySelector('#board .pt') && !document.body.hasAttribute('data-busy')"


def load_once(browser: Any, url: str) -> Dict[str, float]:
    ctx = browser.new_context(viewport={"width": 1200, "height": 800})
    page = ctx.new_page()
    sizes: List[int] = []
    page.on("response", lambda r: sizes.append(int(r.headers.get("content-length", "0") or 0)))
    t0 = time.perf_counter()
    page.goto(url)
    page.wait_for_function(IDLE)
    ready_ms = (time.perf_counter() - t0) * 1000.0
    nav = page.evaluate("(() => { const n = performance.getEntriesByType('navigation')[0]; "
                        "return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd}; })()")
    ctx.close()
    return {"ready_ms": ready_ms, "dom_content_loaded_ms": nav["dcl"], "load_ms": nav["load"],
            "bytes": float(sum(sizes)), "requests": float(len(sizes))}


def screenshot(browser: Any, url: str, path: Path) -> None:
    ctx = browser.new_context(viewport={"width": 1200, "height": 800})
    page = ctx.new_page()
    page.goto(url)
    page.wait_for_function(IDLE)
    page.select_option("#strength", "visits:800")
    page.click("#new-game")
    page.wait_for_function(IDLE)
    played = 0
    for x, y in ((7, 7), (8, 6), (6, 8), (9, 5), (5, 9), (8, 8), (6, 6)):
        if played == 3:
            break
        if page.locator(f'#board .stone[data-x="{x}"][data-y="{y}"]').count():
            continue   # the engine's stone
        page.click(f'#board .pt[data-x="{x}"][data-y="{y}"]', force=True)
        page.wait_for_function(IDLE)
        played += 1
    page.check("#overlay")
    page.wait_for_function(IDLE)
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    ctx.close()


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--screenshot", type=Path, default=None)
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium"))
    a = ap.parse_args(argv)
    if not a.chromium:
        raise SystemExit("no Chromium: install Debian's chromium (make browser) or pass --chromium")
    from playwright.sync_api import sync_playwright
    srv, t = serve.start_background(serve.ServeConfig(host="127.0.0.1", port=0))
    url = f"http://127.0.0.1:{srv.port}/"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=a.chromium, args=ARGS)
            load_once(browser, url)   # warm-up: the server's first game loads the network
            runs = [load_once(browser, url) for _ in range(a.runs)]
            if a.screenshot:
                screenshot(browser, url, a.screenshot)
            browser.close()
    finally:
        srv.shutdown()
        srv.server_close()
    out: Dict[str, Any] = {"runs": a.runs}
    for key in ("ready_ms", "dom_content_loaded_ms", "load_ms"):
        xs = [r[key] for r in runs]
        out[key] = {"median": round(statistics.median(xs), 1), "max": round(max(xs), 1)}
    out["bytes"] = int(runs[0]["bytes"])
    out["requests"] = int(runs[0]["requests"])
    out.update(cpus=os.cpu_count(), python=platform.python_version(),
               load_avg=[round(x, 2) for x in os.getloadavg()])
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
