#!/usr/bin/env bash
# session 51 (no device): a second CPU cycle, from session 50's cpu-s50 weights, on the 15x15 shards of
# the burst only (the 15x15 bars are the ones measured; 20x20 has its own default network, ft2). Run
# from the repository root after `bash tools/train/burst_data.sh`. The same recipe as
# checkpoints/cpu-s50/command.sh otherwise (batch 256, lr 3e-4, warm-up and cosine over the wall time,
# bfloat16 on the CPU, dagger15y x10), with a fresh schedule and optimizer (--init) over 55 minutes.
set -euo pipefail
D=runs/data
DATA=$(tr ' ' '\n' < $D/shards.txt | grep -E '/(gomocup2024|teach15[^/]*|dagger15y/train)\.npz$' | tr '\n' ' ')
test "$(echo $DATA | wc -w)" = 9 || { echo "cpu-s51: expected 9 15x15 shards in $D/shards.txt" >&2; exit 1; }
.venv/bin/python -m tools.train.gpu_burst --data $DATA --repeat $D/dagger15y/train.npz=10 \
    --blocks 5 --channels 48 --batch 256 --lr 3e-4 --warmup 500 --steps 100000 \
    --time-schedule --max-seconds "${MAX_SECONDS:-3300}" --init checkpoints/cpu-s50/5x48-cpu-s50.pt \
    --device cpu --precision bf16 --threads 2 --val-every 2500 --name cpu-s51 --out runs/cpu-s51
