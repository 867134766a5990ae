#!/usr/bin/env bash
# session 9: a 6x64 network from scratch on Gomocup 2024 + all Rapfi teacher games (teacher15, 15b, and 15c with
# its evaluation as half the value target), one torch thread on the 2-core machine (about 200 positions/s, about 100 min)
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data   # gomocup2024.npz: README "Training"; teach15-4000 / teach15b: checkpoints/teacher15{,b}; teach15c-mix below
$G train pack --records runs/teach15c/match/games --openings runs/teach15c/openings.txt --eval-weight 0.5 \
    --out $D/teach15c-mix.npz
$G train supervised --data $D/gomocup2024.npz $D/teach15-4000.npz $D/teach15b.npz $D/teach15c-mix.npz \
    --run runs/sl-6x64 --blocks 6 --channels 64 --steps 4000 --batch 256 --lr 2e-3 --threads 1
$G train export --run runs/sl-6x64 --out runs/models/sl-6x64 --name freestyle15-6x64-sl
