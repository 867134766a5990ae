#!/bin/sh
# 15x15 self-play continued from az15's committed checkpoint (the shipped freestyle15-4x32-sp),
# az15b's recipe, now with the tree's leaf VCF (MCTSConfig.leaf_vcf_nodes=30, the default since
# session 11) in the self-play searches; one core (taskset -c 1), the other ran matches
exec taskset -c 1 nice -n 10 .venv/bin/gomoku train loop --run runs/az15c --iterations 400 --max-minutes 95 \
  --init-model checkpoints/az15/checkpoint.pt \
  --size 15 --n 5 --blocks 4 --channels 32 \
  --games 192 -j 1 --visits 200 --fast-visits 48 --p-full 0.3 \
  --openings /work/shared/data/openings/piskvork_openings.txt \
  --window 40000 --min-positions 1500 --steps 60 --batch 256 --lr 2e-4 --threads 1 \
  --gate-games 0 --seed 17
