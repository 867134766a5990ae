#!/bin/sh
# gates of the continued self-play against the shipped network (400 visits a move, VCF tactics only,
# as session 6's gates); runs/az15b/best is the newest iteration (gating off)
set -e
OP=/work/shared/data/openings
PYGOMOKU_VCT=0 .venv/bin/gomoku tournament model:runs/az15b/best.json:400 name=az15b \
  model:models/freestyle15-4x32-sp.json:400 name=sp --games 200 -j 2 --no-live \
  --openings $OP/piskvork_openings.txt --seed 81 --out runs/t/az15b-vs-sp --resume --quiet
