#!/bin/sh
# 20x20 self-play of the shipped freestyle15-4x32-sp (checkpoints/az15) on both cores, no gating: every
# iteration's candidate plays the next self-play; the last one is measured afterwards (eval.sh).
# Self-play opens from the Piskvork openings (centred on 20x20); the GomocupJudge 20x20 openings are kept
# for the measurement.
exec nice -n 10 .venv/bin/gomoku train loop --run runs/az20 --iterations 400 --max-minutes 75 \
  --init-model checkpoints/az15/checkpoint.pt \
  --size 20 --n 5 --blocks 4 --channels 32 \
  --games 192 -j 2 --visits 200 --fast-visits 48 --p-full 0.3 \
  --openings /work/shared/data/openings/piskvork_openings.txt \
  --window 40000 --min-positions 1500 --steps 60 --batch 256 --lr 2e-4 --threads 2 \
  --gate-games 0 --seed 20
