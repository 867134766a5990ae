#!/bin/sh
# 10x10 five-in-a-row: self-play from the 15x15 supervised network's weights (fully convolutional)
exec nice -n 10 .venv/bin/gomoku train loop --run runs/az10 --iterations 200 --max-minutes 50 \
  --init-model runs/sl-4x32/checkpoint.pt \
  --size 10 --n 5 --blocks 4 --channels 32 \
  --games 160 -j 2 --visits 160 --fast-visits 32 --p-full 0.4 \
  --window 30000 --min-positions 1500 --steps 100 --batch 256 --lr 1e-3 --threads 2 \
  --gate-games 0 --seed 10
