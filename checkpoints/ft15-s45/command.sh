#!/usr/bin/env bash
# session 45: no device. The session-44 recipe (checkpoints/ft15-s44/command.sh: the same data,
# the same held-out games) with the value loss weighed 0.1 instead of 1, on one CPU core beside a
# match: session 44's fine-tune learned the teacher's verdicts on the three-stone openings (value
# error down a sixth) and played worse as White there; this one lets the policy learn from those
# games while the value head stays close to the start network's. Run from the repository root after
# unpacking every checkpoints/teacher15*/match.tar.xz into runs/teach15*/match (their READMEs).
set -euo pipefail
# 1. the data (teacher15e cut at game 1384, teacher15f at 470, teacher15g held out whole): $DATA
source checkpoints/ft15-s44/data.sh
# 2. the fine-tune (log.jsonl)
$G train supervised --data $DATA --run runs/s45/ft15 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 1.5e-4 --warmup 200 --threads 1 --device cpu --init $C/mix-h200/5x48-mix.pt \
    --precision fp32 --max-seconds 4200 --time-schedule --value-weight 0.1 \
    --repeat $D/teach15f-train.npz=4 --repeat $D/teach15h-train.npz=4
# 3. export, the int8 graph, and the held-out screen against the start network (data.sh)
export_and_screen runs/s45/ft15/best.pt runs/s45/models freestyle15-5x48-pol \
    "freestyle-5x48-mix fine-tuned on one CPU core (fp32), value loss weighed 0.1, with Rapfi games from random centre openings (teacher15f/h x4) beside the 15x15 shards, lr 1.5e-4 (session 45)"
