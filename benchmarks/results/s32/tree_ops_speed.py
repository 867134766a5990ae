"""Simulations a second of the whole player with the MCTS edge arithmetic in C (gomoku_ai.native.tree_ops)
and with the Python loops, alternating (session 32's measurement; since session 33 a call of
benchmarks/bench_player_speed.py, which prints one JSON line per arm):

    taskset -c 0 .venv/bin/python benchmarks/results/s32/tree_ops_speed.py \
        benchmarks/results/s31/aiwine-15-sym-1310-results.jsonl.xz 15 2
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench_player_speed import main  # noqa: E402

main([sys.argv[1], sys.argv[2], "--toggle", "_TREE_OPS", "--rounds", sys.argv[3]])
