"""Run ``engine.py`` as a manager would and print JSON: start-up to first move, move latency, and
the process's peak virtual (VmPeak) and resident (VmHWM) memory over a game.

    .venv/bin/python benchmarks/bench_brain.py --moves 100 --turn-ms 1000 [--size 20]

The brain plays one side; the other side's moves come from a quick in-process heuristic player, so
the game is realistic. PYTHONUNBUFFERED is removed from the brain's environment (as in the tests).
Linux only (reads /proc).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def proc_mem(pid: int) -> Dict[str, int]:
    out: Dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmPeak", "VmSize", "VmHWM", "VmRSS"):
                out[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=100, help="moves per game (both sides)")
    ap.add_argument("--brain-moves", type=int, default=0,
                    help="keep starting new games (START again) until the brain made this many moves")
    ap.add_argument("--turn-ms", type=int, default=1000)
    ap.add_argument("--cmd", default=None, help="engine command (default: python engine.py)")
    ap.add_argument("--size", type=int, default=15, help="board size (default: %(default)s)")
    args = ap.parse_args()
    size, c = args.size, args.size // 2

    from gomoku_ai.board import Board
    from gomoku_ai.evaluator import HeuristicEvaluator
    from gomoku_ai.player import Limit, Player

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    cmd = args.cmd.split() if args.cmd else [sys.executable, str(ROOT / "engine.py")]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd="/tmp")
    assert p.stdin and p.stdout and p.stderr
    stdin, stdout = p.stdin, p.stdout       # narrowed (not None), for the closures below

    def send(line: str) -> None:
        stdin.write((line + "\r\n").encode())
        stdin.flush()

    def read_move() -> str:
        while True:
            line = stdout.readline().decode().strip()
            if not line:
                raise RuntimeError("engine closed its output")
            if line.upper().startswith(("MESSAGE", "DEBUG")) or line == "OK":
                continue
            return line

    # GomocupJudge style: START, INFO and BOARD written at once without waiting
    send(f"START {size}")
    for k, v in (("timeout_turn", args.turn_ms), ("timeout_match", 0), ("max_memory", 367001600),
                 ("game_type", 1), ("rule", 0), ("time_left", 2147483647)):
        send(f"INFO {k} {v}")
    send("BOARD")
    send(f"{c},{c},2")
    send("DONE")
    first = read_move()
    startup_ms = (time.perf_counter() - t0) * 1000.0
    board = Board(size)
    board.play(board.parse(f"{c},{c}"))
    board.play(board.parse(first))
    opp = Player(HeuristicEvaluator(), use_vcf=True)
    lat: List[float] = []
    peak: Dict[str, int] = {}
    games = 1
    while True:
        while board.outcome() is None and len(board.moves) < args.moves:
            m = opp.think(board, Limit(visits=60)).move
            board.play(m)
            if board.outcome() is not None:
                break
            x, y = board.xy(m)
            send("INFO time_left 2147483647")
            t = time.perf_counter()
            send(f"TURN {x},{y}")
            reply = read_move()
            lat.append((time.perf_counter() - t) * 1000.0)
            board.play(board.parse(reply))
            for k, v in proc_mem(p.pid).items():
                peak[k] = max(peak.get(k, 0), v)
        if len(lat) >= args.brain_moves:
            break
        # a new game in the same process, as c-gomoku-cli does: START, then the brain opens
        send(f"START {size}")
        read_move_or_ok = stdout.readline().decode().strip()
        assert read_move_or_ok == "OK", read_move_or_ok
        board = Board(size)
        send("BEGIN")
        board.play(board.parse(read_move()))
        games += 1
    send("END")
    p.wait(timeout=5)
    stderr = p.stderr.read().decode()
    print(json.dumps({
        "startup_to_first_move_ms": round(startup_ms, 1), "turn_ms": args.turn_ms, "size": size,
        "games": games, "brain_moves": len(lat),
        "latency_ms_max": round(max(lat), 1) if lat else None,
        "latency_ms_median": round(statistics.median(lat), 1) if lat else None,
        "vm_peak_mb": round(peak.get("VmPeak", 0) / 2**20, 1),
        "rss_peak_mb": round(peak.get("VmHWM", 0) / 2**20, 1),
        "result": str(board.outcome()), "stderr_bytes": len(stderr),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
