#!/bin/sh
# final measurement of the 10x10 network (models/gomoku10-4x32 = runs/az10/best)
set -e
M=model:models/gomoku10-4x32.json:200
.venv/bin/gomoku tournament $M name=az10-200 tactics:200 --size 10 --games 100 -j 2 --seed 101 --out runs/az10/eval-tactics200 --quiet --resume
.venv/bin/gomoku tournament $M name=az10-200 pure:1000 --size 10 --games 100 -j 2 --seed 102 --out runs/az10/eval-pure1000 --quiet --resume
.venv/bin/gomoku tournament $M name=az10-200 model:models/freestyle15-4x32.json:200 name=sl15-200 --size 10 --games 100 -j 2 --seed 103 --out runs/az10/eval-sl15 --quiet --resume
