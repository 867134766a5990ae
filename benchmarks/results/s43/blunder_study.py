"""Session 43: where ours loses as White on 15x15 against AIWine, with Rapfi (1M nodes) as the judge.

Win % are White's (the side we play), from Rapfi's eval text on the teacher packs' fitted scale
(sigmoid(eval / 311.9); a mate is 0 or 100). Rapfi's verdicts vary a little between runs (its
hash), so a single position's figure is only a reading. Subcommands, each printing one line or JSON
object per position:

  by-length PLAYER RUN...  PLAYER's score by colour and by the opening's length in stones (3 or 5
                        for the Piskvork file)
  first-move            White's first move after each Piskvork opening: Rapfi's move and win %,
                        ours at 1 s, and Rapfi's win % after ours
  blunders RUN...       along each game ours lost as White: Rapfi's win % before each of our moves
                        (its move) and after ours; the first move after which Rapfi finds a mate
  probe BLUNDERS RUN... at each such blunder, Rapfi's eval after it and whether our VCT search finds
                        Black's win there (max depth, attacker nodes, quiet moves, proof numbers)
  priors BLUNDERS RUN...  our search at 1 s on each blunder position: prior, visits and Q of the move
                        played and of Rapfi's
  replay BLUNDERS RUN...  our player at 1 s on each blunder position (PYGOMOKU_* switches apply) and
                        Rapfi's win % after its move: how many it holds

    .venv/bin/python benchmarks/results/s43/blunder_study.py blunders \\
        benchmarks/results/s42/aiwine-15-base-4115-results.jsonl.xz > blunders.jsonl
"""
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from build_vct_set import Oracle                      # noqa: E402
from results_io import player_points, read_results     # noqa: E402
from gomoku_ai import vct                              # noqa: E402
from gomoku_ai.board import Board                      # noqa: E402
from gomoku_ai.player import Limit, Player             # noqa: E402
from gomoku_ai.shipped import load_player              # noqa: E402

RAPFI = os.path.expanduser("~/sparring/rapfi/build/pbrain-rapfi")
NODES = 1_000_000
SCALE = 311.9          # teacher15e's fitted eval scale (gomoku train pack --eval-weight)
SOFT_MS, HARD_MS = 920.0, 1000.0
PROBES = ((3, 6000, 0, False), (8, 30000, 0, False), (8, 30000, 40, False), (20, 3000, 0, False),
          (20, 3000, 0, True), (20, 30000, 0, True), (20, 300000, 0, True), (12, 300000, 40, False))


def win(ev: str) -> float:
    """Rapfi's eval text (side to move) as a win % for the side to move."""
    if "M" in ev:
        return 100.0 if ev.startswith("+") else 0.0
    return round(100.0 / (1.0 + math.exp(-float(ev) / SCALE)), 1)


def oracle() -> Oracle:
    return Oracle([RAPFI], NODES, 15)


def think(pl: Player, b: Board):
    pl.new_game()
    return pl.think(b, Limit(soft_ms=SOFT_MS, hard_ms=HARD_MS))


def games(runs: List[str]) -> Dict[Tuple[str, int], dict]:
    out = {}
    for run in runs:
        for r in read_results(Path(run)):
            out[(os.path.basename(run)[:22], r["game"])] = r
    return out


def blunder_positions(path: str, runs: List[str]) -> Iterator[Tuple[dict, Board]]:
    """(record of blunders.jsonl or probe.jsonl with a blunder, board before our move)."""
    gs = games(runs)
    for line in open(path):
        j = json.loads(line)
        if "rows" in j:      # a blunders.jsonl line: its first move Rapfi refutes with a mate
            bl = next((row for row in j["rows"] if row[4] == 0.0 and row[2] > 0.0), None)
            if bl is None:
                continue
            j = {"run": j["run"][:22], "game": j["game"], "ply": bl[0], "ours": bl[3],
                 "rapfi_best": bl[1], "before": bl[2]}
        if "ply" not in j:
            continue
        b = Board(15)
        for x, y in gs[(j["run"], j["game"])]["moves"][:j["ply"]]:
            b.push(b.index(x, y))
        yield j, b


def piskvork_openings() -> List[str]:
    return open(os.path.join(ROOT, "../shared/data/openings/piskvork_openings.txt")).read().splitlines()


def by_length(player: str, runs: List[str]) -> None:
    ops = piskvork_openings()
    score: Dict[Tuple[int, str], List[float]] = {}
    for run in runs:
        for r in read_results(Path(run)):
            got = player_points(r, player)
            if got is None:
                continue
            stones = r.get("opening_plies") or len(ops[r["opening"]].split(", "))
            acc = score.setdefault((stones, got[0]), [0.0, 0])
            acc[0] += got[1]
            acc[1] += 1
    for (stones, colour), (pts, n) in sorted(score.items()):
        print(f"{stones}-stone openings, {player} {colour}: {pts:g}/{n} = {pts / n:.3f}")


def first_move() -> None:
    ops = piskvork_openings()
    orc, pl = oracle(), load_player(width=15)
    for i, line in enumerate(ops):
        offs = [tuple(map(int, p.split(","))) for p in line.split(", ")]
        if any(abs(dx) > 7 or abs(dy) > 7 for dx, dy in offs):
            continue
        b = Board(15)
        for dx, dy in offs:
            b.push(b.index(dx + 7, dy + 7))
        ev, best = orc.ask(b)
        info = think(pl, b)
        b.push(info.move)
        ev2, _ = orc.ask(b)
        b.pop()
        print(i, len(offs), "rapfi", best, win(ev), "ours", b.move_name(info.move),
              round(info.winrate * 100, 1), info.visits, "after-ours(white)", round(100 - win(ev2), 1),
              flush=True)
    orc.close()


def blunders(runs: List[str]) -> None:
    orc = oracle()
    for run in runs:
        for r in read_results(Path(run)):
            if r["white"] != "ours" or r["winner"] != "black":
                continue
            b, rows = Board(15), []
            for ply, (x, y) in enumerate(r["moves"]):
                if ply >= r["opening_plies"] and ply % 2 == 1:
                    ev, best = orc.ask(b)
                    if win(ev) == 0.0 and rows and rows[-1][2] == 0.0:
                        break
                    m = b.index(x, y)
                    b.push(m)
                    ev2, _ = orc.ask(b)
                    b.pop()
                    c = r["comments"].get(str(ply), "")
                    ours = c.split(" ev ")[1].split()[0] if " ev " in c else "?"
                    rows.append((ply, best, win(ev), b.move_name(m), round(100 - win(ev2), 1), ours))
                b.push(b.index(x, y))
            drop, at = max((row[2] - row[4], row[0]) for row in rows)
            print(json.dumps({"run": os.path.basename(run), "game": r["game"], "opening": r["opening"],
                              "plies": r["plies"], "worst_drop": round(drop, 1), "at": at, "rows": rows}),
                  flush=True)
    orc.close()


def probe(path: str, runs: List[str]) -> None:
    orc = oracle()
    for j, b in blunder_positions(path, runs):
        b.push(b.parse(j["ours"]))
        ev, best = orc.ask(b)           # Black to move after our move
        out = dict(j, rapfi_after=ev, black_best=best)
        for depth, nodes, quiet, pn in PROBES:
            t = time.perf_counter()
            res = vct.vct_search(b, max_depth=depth, node_limit=nodes, quiet_moves=quiet, proof_numbers=pn)
            key = f"d{depth}n{nodes}q{quiet}{'pn' if pn else ''}"
            out[key] = [None if res.line is None else len(res.line), round((time.perf_counter() - t) * 1000)]
        print(json.dumps(out), flush=True)
    orc.close()


def priors(path: str, runs: List[str]) -> None:
    pl = load_player(width=15)
    for j, b in blunder_positions(path, runs):
        info = think(pl, b)
        by_visits = {b.move_name(c.move): (i, c) for i, c in enumerate(info.candidates)}
        by_prior = {b.move_name(c.move): i for i, c in
                    enumerate(sorted(info.candidates, key=lambda c: -c.prior))}

        def show(name: str) -> str:
            if name not in by_visits:
                return f"{name}: not a root child"
            i, c = by_visits[name]
            return (f"{name}: prior {c.prior:.3f} (#{by_prior[name] + 1}) visits {c.visits} (#{i + 1}) "
                    f"q {(c.q + 1) * 50:.1f}")
        print(j["game"], j["ply"], "chose", b.move_name(info.move), "|", show(j["ours"]), "|",
              show(j["rapfi_best"]), flush=True)


def replay(path: str, runs: List[str]) -> None:
    orc, pl = oracle(), load_player(width=15)
    held = n = 0
    for j, b in blunder_positions(path, runs):
        info = think(pl, b)
        mv = b.move_name(info.move)
        after: Optional[float] = 0.0
        if mv != j["ours"]:
            b.push(info.move)
            ev, _ = orc.ask(b)
            b.pop()
            after = round(100 - win(ev), 1)
        n += 1
        held += after > 0
        print(j["game"], j["ply"], "was", j["ours"], "now", mv, round(info.winrate * 100, 1), "rapfi",
              j["rapfi_best"], "after", after, flush=True)
    print("held", held, "of", n)
    orc.close()


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "first-move":
        first_move()
    elif cmd == "by-length":
        by_length(args[0], args[1:])
    elif cmd == "blunders":
        blunders(args)
    else:
        {"probe": probe, "priors": priors, "replay": replay}[cmd](args[0], args[1:])
