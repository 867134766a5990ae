#!/usr/bin/env bash
# session 26: no device. freestyle-5x48-mix (checkpoints/mix-h200/5x48-mix.pt) fine-tuned on this
# machine's two CPU cores in bfloat16 for one hour, on all the 15x15 and 20x20 shards, 60 % of the
# batches 20x20 (session 25's 20x20 teacher games: 4.4 times the 20x20 positions it had seen).
# Run from the repository root; the shards are packed as checkpoints/teacher*/README.md say.
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
$G train supervised --data $D/gomocup2024.npz $D/teach15.npz $D/teach15b.npz $D/teach15c-mix.npz \
    $D/teach15d-mix.npz $D/teach20-mix.npz $D/teach20b-mix.npz $D/teach20c-mix.npz $D/teach20d-mix.npz \
    $C/teacher20e/teach20e-mix.npz $C/teacher20f/teach20f-mix.npz \
    --run runs/s26/ft-bf16 --blocks 5 --channels 48 --steps 100000 --batch 256 --lr 4e-4 --warmup 200 \
    --threads 2 --device cpu --init $C/mix-h200/5x48-mix.pt --size-share 20x20=0.6 \
    --precision bf16 --max-seconds 3600 --time-schedule
