#!/bin/sh
# 15x15 self-play improvement of the supervised freestyle15-4x32 network (no gating: every
# iteration's candidate plays the next self-play; candidates are measured afterwards)
exec nice -n 10 .venv/bin/gomoku train loop --run runs/az15 --iterations 400 --max-minutes 110 \
  --init-model runs/sl-4x32/checkpoint.pt \
  --size 15 --n 5 --blocks 4 --channels 32 \
  --games 192 -j 2 --visits 200 --fast-visits 48 --p-full 0.3 \
  --openings /work/shared/data/openings/piskvork_openings.txt \
  --window 40000 --min-positions 1500 --steps 60 --batch 256 --lr 2e-4 --threads 2 \
  --gate-games 0 --seed 15
