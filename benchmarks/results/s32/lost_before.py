"""Were the positions of announced_positions.py already lost? For each position where the player's
move allowed a VCT (its JSON, the "default" setting), the opponent's VCT as if we passed (depth 7,
200,000 attacker nodes); where there is one, each of its defence candidates
(gomoku_ai.vct.defence_candidates) is played and the opponent's VCT searched again (depth 7, 200,000):
a candidate "holds" when none is found. Prints one JSON object.

    .venv/bin/python benchmarks/results/s32/lost_before.py benchmarks/results/s32/announced-20-1311.json.xz 20 [PART/PARTS]
"""
import json
import lzma
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from gomoku_ai import movegen, vct  # noqa: E402
from gomoku_ai.board import Board  # noqa: E402

DEPTH, NODES = 7, 200_000
data = json.load((lzma.open if sys.argv[1].endswith(".xz") else open)(sys.argv[1], "rt"))
size = int(sys.argv[2])
part, parts = (int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "0/1").split("/"))
games = {}
for row in data["configs"]["default"]["rows"]:
    if row["held"]:
        continue
    opener = lzma.open if row["file"].endswith(".xz") else open
    if row["file"] not in games:
        games[row["file"]] = {json.loads(line)["game"]: json.loads(line) for line in opener(row["file"], "rt")}
rows = [r for r in data["configs"]["default"]["rows"] if not r["held"]][part::parts]
out = []
for row in rows:
    g = games[row["file"]][row["game"]]
    b = Board(size)
    for x, y in g["moves"][:row["ply"]]:
        b.play(y * size + x)
    b.pass_turn()
    threat = vct.vct_search(b, max_depth=DEPTH, node_limit=NODES)
    b.pass_turn()
    rec = {"file": row["file"], "game": row["game"], "ply": row["ply"], "threat": threat.line is not None}
    if threat.line is not None:
        cands = movegen.without_forbidden(b, vct.defence_candidates(b, threat.line))
        holding = []
        for m in cands:
            b.play(m)
            if vct.vct_search(b, max_depth=DEPTH, node_limit=NODES).line is None:
                holding.append(m)
            b.pop()
        rec.update(candidates=len(cands), holding=holding)
    out.append(rec)
    print(rec, file=sys.stderr, flush=True)
print(json.dumps({"depth": DEPTH, "nodes": NODES, "rows": out}))
