#!/usr/bin/env bash
# session 27: no device. freestyle20-5x48-ft (checkpoints/ft-cpu-s26/5x48-ft.pt) fine-tuned on the two
# CPU cores in bfloat16 on all the 20x20 teacher shards plus checkpoints/ann20-s27/annotated.npz: Rapfi's move
# and evaluation (200,000 nodes) at every position our engine was to move in in 800 of its 20x20 games
# against Rapfi 100k and AIWine (sessions 23, 24 and 26; gomoku train annotate, runs/s27/ann20/command.sh),
# weighed 8 times over (--repeat). Every batch 20x20.
# Run from the repository root; the shards are packed as checkpoints/teacher*/README.md say.
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
A=checkpoints/ann20-s27/annotated.npz   # session 27 ran it as runs/s27/ann20/annotated.npz, the same file
$G train supervised --data $D/gomocup2024.npz $D/teach20-mix.npz $D/teach20b-mix.npz $D/teach20c-mix.npz \
    $D/teach20d-mix.npz $C/teacher20e/teach20e-mix.npz $C/teacher20f/teach20f-mix.npz \
    $C/teacher20e/teach20e2-mix.npz $C/teacher20f/teach20f2-mix.npz $A --repeat $A=8 \
    --run runs/s27/ft-ann --blocks 5 --channels 48 --steps 100000 --batch 256 --lr 2e-4 --warmup 200 \
    --threads 2 --device cpu --init $C/ft-cpu-s26/5x48-ft.pt --size-share 20x20=1.0 \
    --precision bf16 --max-seconds 2400 --time-schedule
