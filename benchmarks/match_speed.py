"""How fast a player searched in tournament runs, from its own per-move summaries: is a baseline from
another session (another machine) comparable with a run of today? Prints one JSON object.

    .venv/bin/python benchmarks/match_speed.py runs/s45/aiwine-15-base-4115:ours \\
        benchmarks/results/s41/aiwine-20-base-4111-results.jsonl.xz:ours [--plies 10-30]

Each argument is ``FOLDER:PLAYER``; FOLDER is a tournament folder or a results file (plain, or xz
when its name ends in ``.xz``, as kept in ``benchmarks/results/``). Our brain's summary of each move
(``option.show_detail=2``, kept under ``comments`` by move index) is Rapfi's style of line,
``depth D-D ev E n NODES n/ms R tm MS pv ...`` (``protocol.supervise``); the nodes it searched in
``tm`` milliseconds give its speed. Moves outside ``--plies`` (move indices, 0-based, both ends
included: the default 10-30 skips the opening and the short endgame moves) are left out, and so are
moves without a tree search: ``tm 0`` (a forced or announced move) or ``n 0`` (the root's tactics
chose the move). Session 44 found one network running 2.5
times slower on one machine than on another (the bench's network simulations/s, and 991-1,312
against 2,306-2,329 nodes/s here): two runs of the same engine are comparable only when these
figures agree.

Per run: ``moves`` (counted), ``nodes_per_s`` (median, with the quartiles ``q1``/``q3``), ``tm_ms``
(median), and ``max_move_ms``: the longest of the player's moves after the opening by the
manager's clock (``times_ms``, every such move, not only ``--plies``); ``pooled``: the same over
every run.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_io import read_results, results_path  # noqa: E402

#: the node count and time of a move summary, as ``protocol.supervise`` writes it
SUMMARY = re.compile(r"\bn (\d+) n/ms [\d.]+ tm (\d+)\b")


def parse_plies(text: str) -> Tuple[int, int]:
    """``"A-B"`` -> ``(A, B)``, move indices (0-based, both included); refuses anything else."""
    m = re.fullmatch(r"(\d+)-(\d+)", text.strip())
    if not m or int(m.group(1)) > int(m.group(2)):
        raise argparse.ArgumentTypeError(f"--plies {text!r}: expected FIRST-LAST, e.g. 10-30")
    return int(m.group(1)), int(m.group(2))


def move_speeds(rows: List[Dict[str, Any]], player: str, plies: Tuple[int, int]
                ) -> Tuple[List[float], List[int], Optional[int]]:
    """``(nodes/s of each counted move, its tm in ms, the longest of the player's moves by the
    manager's clock in ms or None)`` over the game rows of one run. Raises KeyError / ValueError /
    TypeError on a row without the fields (the caller names the file)."""
    speeds: List[float] = []
    tms: List[int] = []
    longest: Optional[int] = None
    for r in rows:
        colour = 0 if r["black"] == player else 1 if r["white"] == player else None
        if colour is None:
            continue
        for i, t in enumerate(r.get("times_ms") or []):
            if i % 2 == colour and t is not None and i >= int(r.get("opening_plies", 0)):
                longest = int(t) if longest is None else max(longest, int(t))
        for key, text in (r.get("comments") or {}).items():
            i = int(key)
            if i % 2 != colour or not plies[0] <= i <= plies[1]:
                continue
            found = SUMMARY.findall(str(text))
            if not found:
                continue
            nodes, tm = (int(x) for x in found[-1])
            if nodes > 0 and tm > 0:
                speeds.append(nodes * 1000.0 / tm)
                tms.append(tm)
    return speeds, tms, longest


def summary(speeds: Sequence[float], tms: Sequence[int], longest: Optional[int]) -> Dict[str, Any]:
    """The JSON figures of one run (or of several pooled); None where no move was counted."""
    out: Dict[str, Any] = {"moves": len(speeds), "nodes_per_s": None, "q1": None, "q3": None,
                           "tm_ms": None, "max_move_ms": longest}
    if speeds:
        q = statistics.quantiles(speeds, n=4) if len(speeds) > 1 else [speeds[0]] * 3
        out.update(nodes_per_s=round(statistics.median(speeds), 1), q1=round(q[0], 1),
                   q3=round(q[2], 1), tm_ms=statistics.median(tms))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="FOLDER:PLAYER")
    ap.add_argument("--plies", type=parse_plies, default=(10, 30),
                    help="move indices counted, FIRST-LAST (0-based, both included; default 10-30)")
    args = ap.parse_args(argv)
    report: Dict[str, Any] = {"plies": list(args.plies), "runs": []}
    all_speeds: List[float] = []
    all_tms: List[int] = []
    for spec in args.runs:
        folder, sep, player = spec.rpartition(":")
        if not sep or not folder or not player:
            raise SystemExit(f"{spec!r}: expected FOLDER:PLAYER")
        path = results_path(Path(folder))
        try:
            speeds, tms, run_longest = move_speeds(read_results(Path(folder)), player, args.plies)
        except (KeyError, ValueError, TypeError) as e:
            raise SystemExit(f"{path}: not a game result ({e!r})")
        if not speeds:
            raise SystemExit(f"{path}: no move summary of {player!r} in plies "
                             f"{args.plies[0]}-{args.plies[1]} (was it run with option.show_detail=2?)")
        report["runs"].append({"run": str(path), "player": player, **summary(speeds, tms, run_longest)})
        all_speeds += speeds
        all_tms += tms
    longest = max((r["max_move_ms"] for r in report["runs"] if r["max_move_ms"] is not None), default=None)
    report["pooled"] = summary(all_speeds, all_tms, longest)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
