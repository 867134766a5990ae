#!/usr/bin/env bash
# session 47, second try: as ../dg15-s47 (read it first), with the pairwise signal the first lacked.
# For each of our annotated positions where Rapfi's move was not ours, the position after Rapfi's move
# (the opponent to move) is added with Rapfi's evaluation of the position before it, turned to the
# opponent's side, as its value target and the start network's own priors as its policy target
# (dagger_pack.py --rapfi-after): so the value learns that the position after Rapfi's move is as good
# as Rapfi says, beside the position after ours with Rapfi's next evaluation. The DAgger shard is
# weighed 10 times (about 37 % of the batches) and the run is 1,800 s on one core.
set -euo pipefail
source checkpoints/ft15-s44/data.sh
xzcat $C/ann15-s46/annotations.jsonl.xz > runs/s47/ann15.jsonl
.venv/bin/python benchmarks/results/s47/dagger_pack.py runs/s47/ann15.jsonl --out runs/s47/dagger2 \
    --rapfi-after models/freestyle-5x48-mix.int8.onnx
$G train supervised --data $DATA runs/s47/dagger2/train.npz --run runs/s47/dg15b --blocks 5 --channels 48 \
    --steps 100000 --batch 256 --lr 1.5e-4 --warmup 100 --threads 1 --device cpu \
    --init $C/mix-h200/5x48-mix.pt --precision fp32 --max-seconds 1800 --time-schedule \
    --repeat runs/s47/dagger2/train.npz=10
$G train export --checkpoint runs/s47/dg15b/best.pt --out runs/s47/models/freestyle15-5x48-dgb \
    --name freestyle15-5x48-dgb --size 15 --n 5 --rule freestyle \
    --notes "freestyle-5x48-mix fine-tuned on one CPU core (fp32) with DAgger positions x10, the positions after Rapfi's moves included (session 47)"
$G train quantize runs/s47/models/freestyle15-5x48-dgb --data $D/gomocup2024.npz
for a in held-out train-sample; do
  .venv/bin/python benchmarks/results/s47/held_out_view.py runs/s47/dagger/$a.jsonl \
      --network runs/s47/models/freestyle15-5x48-dgb.int8.onnx
done
