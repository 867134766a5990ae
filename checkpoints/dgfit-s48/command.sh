#!/usr/bin/env bash
# session 48: can the value be made to judge these positions at all? A fit test, not a candidate: the
# default network trained on session 47's DAgger shard ALONE (53,661 positions: Rapfi's answers in our
# 15x15 games, the positions after our moves and after Rapfi's differing moves; dagger_pack.py
# --rapfi-after) for 2,100 s on one core, several passes over it, then the value one move ahead
# measured on the trained-on sample and the held-out openings (held_out_view.py).
set -euo pipefail
G=.venv/bin/gomoku
xzcat checkpoints/ann15-s46/annotations.jsonl.xz > runs/ann15-s46.jsonl     # as tools/train/burst_data.sh builds it
.venv/bin/python benchmarks/results/s47/dagger_pack.py runs/ann15-s46.jsonl --out runs/data/dagger15 \
    --rapfi-after models/freestyle-5x48-mix.int8.onnx
$G train supervised --data runs/data/dagger15/train.npz --run runs/s48/dgfit --blocks 5 --channels 48 \
    --steps 100000 --batch 256 --lr 5e-4 --warmup 50 --threads 1 --device cpu \
    --init checkpoints/mix-h200/5x48-mix.pt --precision fp32 --max-seconds 2100 --time-schedule
$G train export --checkpoint runs/s48/dgfit/checkpoint.pt --out runs/s48/models/dgfit --name dgfit \
    --size 15 --n 5 --rule freestyle --notes "fit test: freestyle-5x48-mix trained on the DAgger shard alone (session 48)"
$G train quantize runs/s48/models/dgfit --data runs/data/gomocup2024.npz
for a in held-out train-sample; do
  .venv/bin/python benchmarks/results/s47/held_out_view.py runs/data/dagger15/$a.jsonl \
      --network runs/s48/models/dgfit.int8.onnx
done
