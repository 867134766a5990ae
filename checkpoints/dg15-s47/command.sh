#!/usr/bin/env bash
# session 47: no device. freestyle-5x48-mix, the whole network (tower included), fine-tuned on one CPU core
# on the 15x15 shards plus a DAgger shard of our own match positions: Rapfi 200k's answers and
# evaluations where we were to move (checkpoints/ann15-s46), and the positions right after our moves
# with the opponent's reply and Rapfi's next evaluation as targets (benchmarks/results/s47/dagger_pack.py),
# from the games of 31 of 39 opening shapes; the other 8 shapes' games are held out whole.
# Why: the value one move ahead preferred our losing move over Rapfi's on 69.5 % of the decisive
# positions, and a value-head-only retrain did not move it (../vh15-s46). Run from the repository root
# after unpacking every checkpoints/teacher15*/match.tar.xz into runs/teach15*/match (their READMEs).
set -euo pipefail
# 1. the data: $DATA (data.sh; packed shards are reused when present) and the DAgger split
source checkpoints/ft15-s44/data.sh
xzcat $C/ann15-s46/annotations.jsonl.xz > runs/s47/ann15.jsonl
.venv/bin/python benchmarks/results/s47/dagger_pack.py runs/s47/ann15.jsonl --out runs/s47/dagger
# 2. the fine-tune (log.jsonl)
$G train supervised --data $DATA runs/s47/dagger/train.npz --run runs/s47/dg15 --blocks 5 --channels 48 \
    --steps 100000 --batch 256 --lr 1.5e-4 --warmup 200 --threads 1 --device cpu \
    --init $C/mix-h200/5x48-mix.pt --precision fp32 --max-seconds 3300 --time-schedule \
    --repeat runs/s47/dagger/train.npz=6
# 3. export, the int8 graph, and the held-out screen against the start network (data.sh)
export_and_screen runs/s47/dg15/best.pt runs/s47/models freestyle15-5x48-dg \
    "freestyle-5x48-mix fine-tuned on one CPU core (fp32) on the 15x15 shards plus Rapfi's answers in our own match positions and the positions after our moves (DAgger, x6) (session 47)"
# 4. the decisive positions of the held-out openings' lost games, both networks (dagger_study.py)
for m in models/freestyle-5x48-mix.int8.onnx runs/s47/models/freestyle15-5x48-dg.int8.onnx; do
  .venv/bin/python benchmarks/results/s46/dagger_study.py runs/s47/dagger/held-out.jsonl --network $m
done
