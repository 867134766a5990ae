#!/usr/bin/env bash
# session 52 (no device): a third CPU cycle, from cpu-s51 (shipped as models/freestyle15-5x48-ft in
# session 52), on the burst's 15x15 shards only, shorter and at half cpu-s51's peak rate (a polish of
# a network that has now seen those shards about three times). Run from the repository root after
# `bash tools/train/burst_data.sh`. Otherwise cpu-s51's recipe (checkpoints/cpu-s51/command.sh).
set -euo pipefail
D=runs/data
DATA=$(tr ' ' '\n' < $D/shards.txt | grep -E '/(gomocup2024|teach15[^/]*|dagger15y/train)\.npz$' | tr '\n' ' ')
test "$(echo $DATA | wc -w)" = 9 || { echo "cpu-s52: expected 9 15x15 shards in $D/shards.txt" >&2; exit 1; }
.venv/bin/python -m tools.train.gpu_burst --data $DATA --repeat $D/dagger15y/train.npz=10 \
    --blocks 5 --channels 48 --batch 256 --lr 1.5e-4 --warmup 300 --steps 100000 \
    --time-schedule --max-seconds "${MAX_SECONDS:-2100}" --init checkpoints/cpu-s51/5x48-cpu-s51.pt \
    --device cpu --precision bf16 --threads 2 --val-every 2000 --name cpu-s52 --out runs/cpu-s52
