#!/usr/bin/env bash
# session 35: no device. freestyle20-5x48-ft2 (checkpoints/ft20-s34/5x48-ft2.pt) fine-tuned on the
# two CPU cores in bfloat16 on the 20x20 teacher shards plus the edge-opening teacher games of
# checkpoints/teacher20-edge, lr 1e-4. Run from the repository root; the shards of
# teacher20 to teacher20d are packed as their READMEs say (the others are in the tree).
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
E=$C/teacher20-edge
DATA="$D/teach20-mix.npz $D/teach20b-mix.npz $D/teach20c-mix.npz $D/teach20d-mix.npz \
$C/teacher20e/teach20e-mix.npz $C/teacher20f/teach20f-mix.npz $C/teacher20e/teach20e2-mix.npz \
$C/teacher20f/teach20f2-mix.npz $E/edge13-mix.npz $E/edge14-mix.npz"
# 1. (skipped in session 35 for time: SKIP_BASE=1) the start weights on this run's validation split (trains nothing; its `final` line)
[ "${SKIP_BASE:-0}" = 1 ] || $G train supervised --data $DATA --run runs/s35/base20-val --blocks 5 --channels 48 --steps 0 \
    --batch 256 --threads 2 --device cpu --init $C/ft20-s34/5x48-ft2.pt --precision bf16
# 2. the fine-tune
$G train supervised --data $DATA --run runs/s35/ft20 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 1e-4 --warmup 200 --threads 2 --device cpu --init $C/ft20-s34/5x48-ft2.pt \
    --precision bf16 --max-seconds ${SECONDS_BUDGET:-900} --time-schedule
# 3. export and the int8 graph
$G train export --checkpoint runs/s35/ft20/best.pt --out runs/s35/models/freestyle20-5x48-edge \
    --name freestyle20-5x48-edge --size 20 15 --n 5 --rule freestyle \
    --notes "freestyle20-5x48-ft2 fine-tuned on two CPU cores (bf16) on the 20x20 teacher shards plus edge-opening teacher games (checkpoints/teacher20-edge), lr 1e-4 (session 35)"
$G train quantize runs/s35/models/freestyle20-5x48-edge --data $D/gomocup2024.npz $D/teach20d-mix.npz
