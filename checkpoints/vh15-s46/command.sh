#!/usr/bin/env bash
# session 46: no device. The 15x15 default's value head alone fine-tuned (--train-only value: the tower
# and the policy head frozen, batch-norm statistics included, so the policy is exactly the shipped
# one's) on the session-44 data (Gomocup 2024 and the Rapfi teacher games; teacher15e from game 1384,
# teacher15f from 470 and teacher15g held out). Why: on the first position of each lost game where
# Rapfi's evaluation fell (benchmarks/results/s46/dagger_study.py), the network's value one move ahead
# preferred the move we played over Rapfi's in 69 % of the positions. Run from the repository root
# after unpacking every checkpoints/teacher15*/match.tar.xz into runs/teach15*/match (their READMEs).
set -euo pipefail
# 1. the data: $DATA (the packed shards are reused when present)
source checkpoints/ft15-s44/data.sh
# 2. the value-head fine-tune (log.jsonl)
$G train supervised --data $DATA --run runs/s46/vh15 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 5e-4 --warmup 100 --threads 1 --device cpu --init $C/mix-h200/5x48-mix.pt \
    --precision fp32 --max-seconds 2400 --time-schedule --train-only value
# 3. export, the int8 graph, and the held-out screen against the start network (data.sh)
export_and_screen runs/s46/vh15/best.pt runs/s46/models freestyle15-5x48-vh \
    "freestyle-5x48-mix with its value head alone fine-tuned on one CPU core (fp32) on the 15x15 shards and Rapfi games, the policy unchanged (session 46)"
