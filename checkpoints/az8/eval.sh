#!/bin/sh
# final measurement of models/gomoku8-4x32 (= runs/az8/best, iteration 47)
set -e
.venv/bin/gomoku tournament model:models/gomoku8-4x32.json:200 name=az8-200 tactics:200 --size 8 --games 100 -j 2 --seed 81 --out runs/az8/eval-tactics200 --quiet
.venv/bin/gomoku tournament model:models/gomoku8-4x32.json:200 name=az8-200 pure:1000 --size 8 --games 100 -j 2 --seed 82 --out runs/az8/eval-pure1000 --quiet
.venv/bin/gomoku tournament model:models/gomoku8-4x32.json:200 name=az8-200 heuristic:200 --size 8 --games 100 -j 2 --seed 83 --out runs/az8/eval-heuristic200 --quiet
