"""Load generator for ``gomoku serve``: throughput and latency of ``POST /move`` on loopback.

Starts ``gomoku serve`` as a subprocess on a free loopback port (or uses ``--url`` of a running
one), then ``--concurrency`` client threads, each on one kept-alive ``http.client`` connection, send
``--requests`` move requests in total, cycling through fixed non-tactical positions at a fixed
``--visits``. Prints one JSON object: requests/s, latency percentiles (ms, client side), the
server's own search time, status counts and the answer sources; then ``overload``: a burst of
``--burst`` simultaneous requests, each on its own connection, of ``--burst-visits`` visits (how
many were answered, how many refused with 503 and how fast a refusal comes); then ``malformed``:
each kind of bad request ``--bad-rounds`` times (its status and latency).

    .venv/bin/python benchmarks/bench_serve.py [--requests 200] [--concurrency 4] [--visits 200]
                                               [--workers 2] [--queue 16] [--url http://...]
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]

# Openings and middle games (15x15 freestyle) with no immediate tactic, so every answer is a search.
POSITIONS = [
    ["h8"],
    ["h8", "i9"],
    ["h8", "i9", "g9", "i7"],
    ["h8", "h9", "i8", "g8", "i9", "i7"],
    ["h8", "i9", "j8", "i8", "i7", "h6"],
    ["h8", "i7", "g9", "j6", "g7", "k5", "f8"],
]


def percentile(xs: List[float], q: float) -> float:
    """Nearest-rank percentile of a non-empty list."""
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(q / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def start_server(workers: int, queue: int, max_visits: int, log_path: Path
                 ) -> Tuple[subprocess.Popen[bytes], int]:
    env = dict(os.environ)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(v, "1")
    p = subprocess.Popen([sys.executable, "-m", "tools.cli", "serve", "--host", "127.0.0.1",
                          "--port", "0", "--workers", str(workers), "--queue", str(queue),
                          "--max-visits", str(max_visits), "--log-file", str(log_path)],
                         cwd=str(ROOT), env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    assert p.stderr is not None
    marker = "listening on http://127.0.0.1:"
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if p.poll() is not None:
            raise SystemExit(f"the server exited: {p.stderr.read().decode(errors='replace')}")
        text = log_path.read_text() if log_path.exists() else ""
        if marker in text:
            return p, int(text.split(marker, 1)[1].split()[0])
        time.sleep(0.05)
    p.kill()
    raise SystemExit("the server did not start within 60 s")


def post(conn: http.client.HTTPConnection, body: Dict[str, Any]) -> Tuple[int, Dict[str, Any]]:
    conn.request("POST", "/move", body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    return r.status, (json.loads(data) if data else {})


def run_load(host: str, port: int, requests: int, concurrency: int, visits: int) -> Dict[str, Any]:
    lat: List[float] = []
    search_ms: List[float] = []
    statuses: Counter = Counter()
    sources: Counter = Counter()
    lock = threading.Lock()
    counter = iter(range(requests))

    def client(tid: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=120)
        try:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                body = {"moves": POSITIONS[i % len(POSITIONS)], "visits": visits}
                t0 = time.perf_counter()
                try:
                    st, js = post(conn, body)
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = http.client.HTTPConnection(host, port, timeout=120)
                    st, js = -1, {}
                dt = (time.perf_counter() - t0) * 1000.0
                with lock:
                    statuses[st] += 1
                    if st == 200:
                        lat.append(dt)
                        search_ms.append(float(js.get("elapsed_ms", 0.0)))
                        sources[js.get("source", "?")] += 1
        finally:
            conn.close()

    # warm-up (not timed): one request per position
    conn = http.client.HTTPConnection(host, port, timeout=120)
    for mv in POSITIONS:
        post(conn, {"moves": mv, "visits": visits})
    conn.close()

    threads = [threading.Thread(target=client, args=(t,), daemon=True) for t in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    wall = time.perf_counter() - t0
    ok = len(lat)
    out: Dict[str, Any] = {
        "requests": requests, "concurrency": concurrency, "visits": visits,
        "ok": ok, "status_counts": {str(k): v for k, v in sorted(statuses.items())},
        "seconds": round(wall, 3), "requests_per_s": round(ok / wall, 2) if wall > 0 else None,
        "sources": dict(sources),
    }
    if lat:
        out["latency_ms"] = {"p50": round(percentile(lat, 50), 1),
                             "p90": round(percentile(lat, 90), 1),
                             "p99": round(percentile(lat, 99), 1),
                             "max": round(max(lat), 1), "mean": round(sum(lat) / ok, 1)}
        out["server_search_ms"] = {"p50": round(percentile(search_ms, 50), 1),
                                   "p99": round(percentile(search_ms, 99), 1)}
        out["visits_per_s"] = round(ok * visits / wall)
    return out


def run_overload(host: str, port: int, burst: int, visits: int) -> Dict[str, Any]:
    """``burst`` requests at once, one connection each: statuses and latency by status (ms)."""
    start = threading.Barrier(burst)
    results: List[Tuple[int, float]] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=300)
        body = {"moves": POSITIONS[i % len(POSITIONS)], "visits": visits}
        try:
            start.wait(30)
            t0 = time.perf_counter()
            try:
                st, _ = post(conn, body)
            except (OSError, http.client.HTTPException):
                st = -1
            dt = (time.perf_counter() - t0) * 1000.0
        finally:
            conn.close()
        with lock:
            results.append((st, dt))

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(burst)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    out: Dict[str, Any] = {"burst": burst, "visits": visits,
                           "status_counts": dict(Counter(str(s) for s, _ in results))}
    for st in sorted({s for s, _ in results}):
        ms = [d for s, d in results if s == st]
        out[f"latency_ms_{st}"] = {"p50": round(percentile(ms, 50), 1),
                                   "max": round(max(ms), 1)}
    return out


def _raw_post(body: bytes, ctype: str = "application/json") -> bytes:
    return (f"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


BAD_REQUESTS = {
    "bad_json_400": _raw_post(b"{not json"),
    "unknown_key_400": _raw_post(b'{"colour": "x"}'),
    "bad_cell_400": _raw_post(b'{"board": [[7, 0, 0, 0, 0]]}'),
    "game_over_422": _raw_post(b'{"moves": ["a1","a2","b1","b2","c1","c2","d1","d2","e1"]}'),
    "wrong_type_415": _raw_post(b"{}", "text/plain"),
    "no_length_411": b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n",
    "too_large_413": b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 10000000\r\n\r\n{",
    "not_http_400": b"garbage\r\n\r\n",
    "huge_header_431": b"GET /health HTTP/1.1\r\nHost: x\r\nX: " + b"y" * 70000 + b"\r\n\r\n",
}


def run_malformed(host: str, port: int, rounds: int) -> Dict[str, Any]:
    """Each of :data:`BAD_REQUESTS` ``rounds`` times on a fresh connection (the server closes
    after some of them): the statuses seen and the median time to the answer (ms)."""
    import socket
    out: Dict[str, Any] = {}
    for name, raw in BAD_REQUESTS.items():
        statuses: Counter = Counter()
        ms: List[float] = []
        for _ in range(rounds):
            t0 = time.perf_counter()
            with socket.create_connection((host, port), timeout=10) as sock:
                sock.sendall(raw)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            ms.append((time.perf_counter() - t0) * 1000.0)
            parts = data.split(b" ", 2)
            statuses[parts[1].decode() if len(parts) > 1 else "none"] += 1
        out[name] = {"status_counts": dict(statuses), "p50_ms": round(percentile(ms, 50), 2)}
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument("--visits", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2, help="server workers (when started here)")
    ap.add_argument("--queue", type=int, default=16, help="server queue (when started here)")
    ap.add_argument("--burst", type=int, default=40, help="simultaneous requests of the overload "
                    "test (0: none)")
    ap.add_argument("--burst-visits", type=int, default=2000)
    ap.add_argument("--bad-rounds", type=int, default=50, help="rounds of each malformed request "
                    "(0: none)")
    ap.add_argument("--url", default=None, help="use a running server, e.g. http://127.0.0.1:8080")
    a = ap.parse_args(argv)
    proc = None
    with tempfile.TemporaryDirectory() as tmp:
        if a.url:
            u = urlsplit(a.url)
            if u.hostname not in ("127.0.0.1", "localhost", "::1"):
                raise SystemExit("the benchmark only talks to loopback addresses")
            host, port = u.hostname, u.port or 80
        else:
            host = "127.0.0.1"
            proc, port = start_server(a.workers, a.queue, max(a.visits, a.burst_visits, 1),
                                      Path(tmp) / "serve.log")
        try:
            res = run_load(host, port, a.requests, a.concurrency, a.visits)
            if a.burst:
                res["overload"] = run_overload(host, port, a.burst, a.burst_visits)
            if a.bad_rounds:
                res["malformed"] = run_malformed(host, port, a.bad_rounds)
        finally:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                assert proc.stderr is not None      # start_server's stderr=PIPE
                proc.stderr.close()
    res.update(server_workers=None if a.url else a.workers, cpus=os.cpu_count(),
               python=platform.python_version(),
               load_avg=[round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg")
               else None)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
