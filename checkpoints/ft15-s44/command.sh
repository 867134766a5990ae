#!/usr/bin/env bash
# session 44: no device. freestyle-5x48-mix (checkpoints/mix-h200/5x48-mix.pt, the 15x15 default)
# fine-tuned 50 minutes on two CPU cores in fp32 (bf16 did not reach 100 steps in 3 minutes on
# this AMD EPYC without AVX-512, where it is emulated; fp32 ran 314 positions/s) with Rapfi games
# from random three-stone centre openings (teacher15f and teacher15h; the Piskvork positions kept
# out) weighed 4 times, beside the older 15x15 shards. Held out of training: teacher15e games 1384+, teacher15f games 470+ (and their
# openings), teacher15g (five-stone openings). Run from the repository root after unpacking
# every checkpoints/teacher15*/match.tar.xz into runs/teach15*/match (their READMEs).
set -euo pipefail
# 1. the data (teacher15e cut at game 1384, teacher15f at 470, teacher15g held out whole): $DATA
source checkpoints/ft15-s44/data.sh
# 2. the fine-tune (log.jsonl)
$G train supervised --data $DATA --run runs/s44/ft15 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 1.5e-4 --warmup 200 --threads 2 --device cpu --init $C/mix-h200/5x48-mix.pt \
    --precision fp32 --max-seconds 3000 --time-schedule \
    --repeat $D/teach15f-train.npz=4 --repeat $D/teach15h-train.npz=4
# 3. export, the int8 graph, and the held-out screen against the start network (data.sh)
export_and_screen runs/s44/ft15/best.pt runs/s44/models freestyle15-5x48-ctr \
    "freestyle-5x48-mix fine-tuned on two CPU cores (bf16) with Rapfi games from random centre openings (teacher15f/g x4) beside the 15x15 shards, lr 1.5e-4 (session 44)"
