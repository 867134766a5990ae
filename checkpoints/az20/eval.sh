#!/bin/sh
# The measurement in models/freestyle20-4x32-sp.md: the 20x20 self-play candidate (runs/az20/best) against
# the network it started from (models/freestyle15-4x32-sp) on 20x20, both on their float graphs at equal
# visits (VCT off, as the loop's gates), the GomocupJudge 20x20 openings (not used in self-play) with the
# board symmetries, in colour-swapped pairs.
set -e
OP=/work/shared/data/openings
PYGOMOKU_VCT=0 PYGOMOKU_NET_BACKEND=onnx .venv/bin/gomoku tournament \
  model:runs/az20/best.json:400 name=az20 model:models/freestyle15-4x32-sp.json:400 name=sp \
  --size 20 --transform --games 200 -j 2 --openings $OP/gomocupjudge_openings_20x20.txt --seed 2020 \
  --out runs/t/az20-vs-sp --resume --quiet
# the engine as it plays (int8 graphs, root tactics on) at 0.5 s a move: the new network against the old one on 20x20
.venv/bin/gomoku tournament model:models/freestyle20-4x32-sp name=sp20-0.5s model:models/freestyle15-4x32-sp name=sp-0.5s \
  --size 20 --transform --tc 0/0.5 --games 60 -j 2 --openings $OP/gomocupjudge_openings_20x20.txt --seed 2021 \
  --out runs/t/sp20-vs-sp-0.5s --resume --quiet
