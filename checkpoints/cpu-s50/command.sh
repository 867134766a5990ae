#!/usr/bin/env bash
# session 50 (no device): the GPU burst's recipe, scaled down to the two CPU cores. Run from the
# repository root after `bash tools/train/burst_data.sh` (runs/data: 21 shards, 2,776,688 positions).
# Same data, weights and start as runs/data/burst.sh (checkpoints/mix-h200/5x48-mix.pt, 30 % of the
# batches 20x20, dagger15y x10, ann20-s46/-s48 x4), but batch 256 (not 1,024), lr 3e-4 (not 1e-3),
# bfloat16 autocast on the CPU (2.2x fp32 here: benchmarks/bench_train.py), the warm-up + cosine
# schedule run over the time (--time-schedule: 70 minutes, so that the rate ends low on a CPU of any speed).
set -euo pipefail
D=runs/data
DATA=$(cat $D/shards.txt)    # written by burst_data.sh: the burst's --data list
.venv/bin/python -m tools.train.gpu_burst --data $DATA \
    --repeat $D/dagger15y/train.npz=10 --repeat $D/ann20-s46.npz=4 --repeat $D/ann20-s48.npz=4 \
    --blocks 5 --channels 48 --batch 256 --lr 3e-4 --warmup 500 --steps 100000 \
    --time-schedule --max-seconds "${MAX_SECONDS:-4200}" --init checkpoints/mix-h200/5x48-mix.pt --size-share 20x20=0.3 \
    --device cpu --precision bf16 --threads 2 --val-every 2500 --name cpu-s50 --out runs/cpu-s50
