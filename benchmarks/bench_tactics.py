"""Speed of the tactical layer (pure Python, one thread). Prints one JSON object.

    .venv/bin/python benchmarks/bench_tactics.py [--seconds 0.5] [--random 300] [--games 60]

* ``puzzles``: every VCF puzzle of ``tests/test_tactics.py`` (3 to 9 fours, all four rules), each
  solved repeatedly for ``--seconds``: ms per solve, solves/s, nodes per solve and nodes/s.
  The pattern caches are warmed by one untimed solve first (they persist for the process).
* ``no_vcf``: positions where the search must prove that there is no VCF.
* ``random``: ``--random`` seeded random middle-game positions (all rules): mean ms per
  :func:`find_vcf` (found or not) and nodes/s; also the mean cost of :func:`analyse`.
* ``game_positions``: ``--games`` positions per rule from random games that take wins and block
  fives (``tests.test_tactics.game_position``): find_vcf mean/max ms, nodes/s, and the median /
  90th percentile / max ms of a full :func:`analyse` (VCF defences included).
* ``primitives``: microseconds per call of winning_moves / must_block / four_moves /
  five_points_through on a middle-game position.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import random
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Tuple, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gomoku_ai import native  # noqa: E402
from gomoku_ai import tactics as T  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402
from gomoku_ai.rules import BLACK, WHITE, Rule  # noqa: E402

R = TypeVar("R")


def load_tests() -> ModuleType:
    spec = importlib.util.spec_from_file_location("test_tactics", ROOT / "tests" / "test_tactics.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def timed(fn: Callable[[], R], seconds: float) -> Tuple[int, float, R]:
    """(calls, total seconds, last result) of calling fn repeatedly for ~seconds (at least 3)."""
    n = 0
    t0 = time.perf_counter()
    while True:
        res = fn()
        n += 1
        el = time.perf_counter() - t0
        if n >= 3 and el >= seconds:
            return n, el, res


def random_positions(count: int, seed: int = 2024) -> List[Board]:
    rng = random.Random(seed)
    rules = [Rule.FREESTYLE, Rule.STANDARD, Rule.RENJU, Rule.CARO]
    out: List[Board] = []
    while len(out) < count:
        rule = rules[len(out) % 4]
        b = Board(15, rule=rule)
        nb = rng.randint(8, 20)
        nw = nb - rng.randint(0, 1)
        sq = [y * 15 + x for y in range(3, 12) for x in range(3, 12)]
        rng.shuffle(sq)
        b.set_position(sq[:nb], sq[nb:nb + nw], to_move=rng.choice([BLACK, WHITE]))
        if any(b.winning_line(m) for m in b.moves):
            continue
        out.append(b)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.5, help="time per puzzle")
    ap.add_argument("--random", type=int, default=300, help="random positions")
    ap.add_argument("--games", type=int, default=60, help="random-game positions per rule")
    args = ap.parse_args()
    tests = load_tests()
    out: Dict[str, Any] = {"python": platform.python_version(), "machine": platform.machine(),
                           "vcf_prover": native.status(), "puzzles": {}}

    tot_solves = tot_time = tot_nodes = 0.0
    for name, rule, side, text, at, fours in tests.PUZZLES:
        b, _ = tests.pos(text, rule, side, at=at)
        T.vcf_search(b)                                   # warm the pattern caches
        n, el, res = timed(lambda: T.vcf_search(b), args.seconds)
        out["puzzles"][name] = {
            "rule": rule.value, "fours": fours, "found": res.line is not None,
            "ms_per_solve": round(el / n * 1000, 3), "solves_per_s": round(n / el, 1),
            "nodes": res.nodes, "nodes_per_s": round(res.nodes * n / el),
        }
        tot_solves += n
        tot_time += el
        tot_nodes += res.nodes * n
    out["puzzles_total"] = {"solves_per_s": round(tot_solves / tot_time, 1),
                            "ms_per_solve": round(tot_time / tot_solves * 1000, 3),
                            "nodes_per_s": round(tot_nodes / tot_time)}

    no = {}
    for i, (text, rule) in enumerate(tests.NO_VCF):
        b, _ = tests.pos(text, rule, BLACK, at=(4, 4))
        T.vcf_search(b)
        n, el, res = timed(lambda: T.vcf_search(b, node_limit=200000), args.seconds)
        no[f"no_vcf_{i}"] = {"ms_per_solve": round(el / n * 1000, 3), "nodes": res.nodes,
                             "complete": res.complete, "nodes_per_s": round(res.nodes * n / el)}
    out["no_vcf"] = no

    boards = random_positions(args.random)
    for b in boards:                                      # warm caches
        T.vcf_search(b)
    t0 = time.perf_counter()
    nodes = found = 0
    for b in boards:
        r = T.vcf_search(b)
        nodes += r.nodes
        found += r.line is not None
    el = time.perf_counter() - t0
    t1 = time.perf_counter()
    kinds: dict = {}
    for b in boards:
        k = T.analyse(b).kind
        kinds[k] = kinds.get(k, 0) + 1
    el2 = time.perf_counter() - t1
    out["random"] = {"positions": len(boards), "with_vcf": found,
                     "ms_per_find_vcf": round(el / len(boards) * 1000, 3),
                     "nodes_per_s": round(nodes / el) if el else None,
                     "ms_per_analyse": round(el2 / len(boards) * 1000, 3), "analyse_kinds": kinds}

    game = {}
    for rule in (Rule.FREESTYLE, Rule.STANDARD, Rule.RENJU, Rule.CARO):
        rng = random.Random(77)
        pos = [g for g in (tests.game_position(rng, rule) for _ in range(args.games)) if g]
        for g in pos:
            T.vcf_search(g)
        vt, at_, vn = [], [], 0
        for g in pos:
            t = time.perf_counter()
            r = T.vcf_search(g)
            vt.append(time.perf_counter() - t)
            vn += r.nodes
            t = time.perf_counter()
            T.analyse(g)
            at_.append(time.perf_counter() - t)
        vt.sort()
        at_.sort()
        game[rule.value] = {
            "positions": len(pos),
            "find_vcf_ms_mean": round(sum(vt) / len(vt) * 1000, 3),
            "find_vcf_ms_max": round(vt[-1] * 1000, 3),
            "nodes_per_s": round(vn / sum(vt)),
            "analyse_ms_median": round(at_[len(at_) // 2] * 1000, 3),
            "analyse_ms_p90": round(at_[int(len(at_) * 0.9)] * 1000, 3),
            "analyse_ms_max": round(at_[-1] * 1000, 3),
        }
    out["game_positions"] = game

    b = boards[0]
    last = b.moves[-1]
    prim = {}
    for label, fn in (("winning_moves", lambda: T.winning_moves(b)),
                      ("must_block", lambda: T.must_block(b)),
                      ("four_moves", lambda: T.four_moves(b)),
                      ("three_moves", lambda: T.three_moves(b)),
                      ("five_points_through", lambda: T.five_points_through(b, last, b[last]))):
        n, el, _ = timed(fn, min(args.seconds, 0.3))
        prim[label] = round(el / n * 1e6, 2)
    out["primitives_us"] = prim
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
