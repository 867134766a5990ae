#!/bin/sh
# the measured 8x8 run (from scratch, self-play only)
exec .venv/bin/gomoku train loop --run runs/az8 --iterations 200 --max-minutes 46 \
  --size 8 --n 5 --blocks 4 --channels 32 \
  --games 200 -j 2 --visits 160 --fast-visits 32 --p-full 0.4 \
  --window 25000 --min-positions 1500 --steps 120 --batch 256 --lr 2e-3 --threads 2 \
  --gate-games 0 --seed 8
