#!/bin/sh
# final measurement of the self-play successor (models/freestyle15-4x32-sp = runs/az15/best)
set -e
OP=/work/shared/data/openings
.venv/bin/gomoku tournament model:models/freestyle15-4x32-sp name=sp-0.5s model:models/freestyle15-4x32 name=sl-0.5s \
  --tc 0/0.5 --games 100 -j 2 --openings $OP/piskvork_openings.txt --seed 151 --out runs/t/sp-vs-sl --resume --quiet
.venv/bin/gomoku tournament model:models/freestyle15-4x32-sp name=sp-0.5s pure name=pure-0.5s tactics name=tactics-0.5s \
  --format gauntlet --tc 0/0.5 --games 100 -j 2 --openings $OP/piskvork_openings.txt --seed 15 --out runs/t/gauntlet15-sp --resume --quiet
.venv/bin/gomoku tournament model:models/freestyle15-4x32-sp name=sp-0.5s pure name=pure-0.5s tactics name=tactics-0.5s \
  --format gauntlet --tc 0/0.5 --games 100 -j 2 --size 20 --openings $OP/gomocupjudge_openings_20x20.txt --seed 20 --out runs/t/gauntlet20-sp --resume --quiet
