#!/bin/sh
# Session 11: the same run continued in place (runs/az20 resumes from its state.json at iteration 31; the
# committed checkpoint.pt is that state), 100 more minutes on both cores, same settings as command.sh.
exec nice -n 10 .venv/bin/gomoku train loop --run runs/az20 --iterations 400 --max-minutes 100 \
  --init-model checkpoints/az15/checkpoint.pt \
  --size 20 --n 5 --blocks 4 --channels 32 \
  --games 192 -j 2 --visits 200 --fast-visits 48 --p-full 0.3 \
  --openings /work/shared/data/openings/piskvork_openings.txt \
  --window 40000 --min-positions 1500 --steps 60 --batch 256 --lr 2e-4 --threads 2 \
  --gate-games 0 --seed 20
