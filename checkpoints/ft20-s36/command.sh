#!/usr/bin/env bash
# session 36: no device. Session 35's fine-tune (checkpoints/ft20-s35/5x48-edge.pt, itself
# freestyle20-5x48-ft2 after 15 minutes) continued for longer on the two CPU cores in bfloat16,
# on the same data: the 20x20 teacher shards plus the edge-opening teacher games of
# checkpoints/teacher20-edge, lr 1e-4 decaying with the time budget. Run from the repository
# root; the shards of teacher20 to teacher20d are packed as their READMEs say.
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
E=$C/teacher20-edge
DATA="$D/teach20-mix.npz $D/teach20b-mix.npz $D/teach20c-mix.npz $D/teach20d-mix.npz \
$C/teacher20e/teach20e-mix.npz $C/teacher20f/teach20f-mix.npz $C/teacher20e/teach20e2-mix.npz \
$C/teacher20f/teach20f2-mix.npz $E/edge13-mix.npz $E/edge14-mix.npz"
$G train supervised --data $DATA --run runs/s36/ft20 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 1e-4 --warmup 200 --threads 2 --device cpu --init $C/ft20-s35/5x48-edge.pt \
    --precision bf16 --max-seconds ${SECONDS_BUDGET:-3300} --time-schedule
$G train export --checkpoint runs/s36/ft20/best.pt --out runs/s36/models/freestyle20-5x48-edge2 \
    --name freestyle20-5x48-edge2 --size 20 15 --n 5 --rule freestyle \
    --notes "freestyle20-5x48-ft2 fine-tuned on two CPU cores (bf16) on the 20x20 teacher shards plus edge-opening teacher games (checkpoints/teacher20-edge), lr 1e-4: 15 minutes in session 35, 55 more in session 36"
$G train quantize runs/s36/models/freestyle20-5x48-edge2 --data $D/gomocup2024.npz $D/teach20d-mix.npz
