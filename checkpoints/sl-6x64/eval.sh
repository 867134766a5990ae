#!/usr/bin/env bash
# the measurements in README.md: int8 graph, policy accuracy, speed, and the gate against the shipped network
set -euo pipefail
G=.venv/bin/gomoku
M=runs/models/sl-6x64
S=models/freestyle15-4x32-sp
$G train quantize $M --data runs/data/gomocup2024.npz
$G train accuracy $M $S --data runs/data/teach15-heldout.npz --val-fraction 1.0
$G train accuracy $M $S --data runs/data/gomocup2024.npz
.venv/bin/python benchmarks/bench_int8.py --model $M --ms 600
.venv/bin/python benchmarks/bench_int8.py --model $S --ms 600
# visits in the ratio of the two players' visits/s on their int8 graphs (2,189 / 5,732 = 0.382): a proxy for equal time
PYGOMOKU_VCT=0 $G tournament model:$M.json:306 name=t64 model:$S.json:800 name=sp --games 100 -j 1 \
    --openings ../shared/data/openings/piskvork_openings.txt --seed 96 --out runs/t/t64-vs-sp
