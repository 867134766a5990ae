#!/usr/bin/env bash
# session 34: no device. freestyle20-5x48-ft (checkpoints/ft-cpu-s26/5x48-ft.pt) fine-tuned 45 more
# minutes on one CPU core in bfloat16, on the 20x20 teacher shards only (teach20e2 / teach20f2, made
# after session 26's fine-tune, included), lr 1e-4. Run from the repository root; the shards of
# teacher20 to teacher20d are packed as their READMEs say (the others are in the tree).
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
DATA="$D/teach20-mix.npz $D/teach20b-mix.npz $D/teach20c-mix.npz $D/teach20d-mix.npz \
$C/teacher20e/teach20e-mix.npz $C/teacher20f/teach20f-mix.npz $C/teacher20e/teach20e2-mix.npz \
$C/teacher20f/teach20f2-mix.npz"
# 1. the start weights on this run's validation split (trains nothing; its `final` line)
$G train supervised --data $DATA --run runs/s34/base20-val --blocks 5 --channels 48 --steps 0 \
    --batch 256 --threads 1 --device cpu --init $C/ft-cpu-s26/5x48-ft.pt --precision bf16
# 2. the fine-tune (taskset -c 0 in session 34, beside the 15x15 run on the other core)
$G train supervised --data $DATA --run runs/s34/ft20 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 1e-4 --warmup 200 --threads 1 --device cpu --init $C/ft-cpu-s26/5x48-ft.pt \
    --precision bf16 --max-seconds 2700 --time-schedule
# 3. export and the int8 graph
$G train export --checkpoint runs/s34/ft20/best.pt --out runs/s34/models/freestyle20-5x48-ft2 \
    --name freestyle20-5x48-ft2 --size 20 15 --n 5 --rule freestyle \
    --notes "freestyle20-5x48-ft fine-tuned 45 min more on one CPU core (bf16) on the 20x20 teacher shards only, teach20e2/f2 included, lr 1e-4, 4,864 steps x 256 (session 34)"
$G train quantize runs/s34/models/freestyle20-5x48-ft2 --data $D/gomocup2024.npz $D/teach20d-mix.npz
