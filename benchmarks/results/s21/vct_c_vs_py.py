"""Session 21: the C VCT against the Python one (C VCF inside both), in one process, alternating
position by position, on the VCT and blunder sets at depths 3 and 5. Prints the total time of each and
how many results differ (line, nodes, VCF nodes, aborted, depth). Run from the repository root:

    taskset -c 0 .venv/bin/python benchmarks/results/s21/vct_c_vs_py.py
"""
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from gomoku_ai import native, vct  # noqa: E402

positions = []
for name in ("vct_positions.txt", "blunder_positions.txt"):
    positions += vct.read_positions(ROOT / "benchmarks" / "data" / name)
spent = {"c": 0.0, "python": 0.0}
differ = nodes = vcf_nodes = 0
for p in positions:
    b = p.board()
    for depth, limit in ((3, 3000), (5, 20000)):
        out = {}
        for impl in ("c", "python"):
            vct.NATIVE_VCT = impl == "c"
            t = time.perf_counter()
            r = vct.vct_search(b, max_depth=depth, node_limit=limit)
            spent[impl] += time.perf_counter() - t
            out[impl] = (r.line, r.nodes, r.vcf_nodes, r.aborted, r.depth)
        differ += out["c"] != out["python"]
        nodes += out["c"][1]
        vcf_nodes += out["c"][2]
print(json.dumps({"positions": len(positions), "searches": 2 * len(positions), "differ": differ,
                  "attacker_nodes": nodes, "vcf_nodes": vcf_nodes, "native": native.status(),
                  "seconds": {k: round(v, 3) for k, v in spent.items()},
                  "speedup": round(spent["python"] / spent["c"], 2)}, indent=2))
