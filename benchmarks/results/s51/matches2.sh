#!/usr/bin/env bash
set -u
cd /work/main
while [ ! -f runs/s51/matches.done ]; do sleep 5; done
S=$HOME/sparring; PY=/work/main/.venv/bin/python
P15="--size 15 --transform --openings ../shared/data/openings/piskvork_openings.txt --openings-order random"
CAND="--model /work/main/runs/cpu-s51/cpu-s51"
run() {
  taskset -c $1 .venv/bin/gomoku tournament --tc 0/1 -j 1 --no-live --quiet cmd="$PY /tmp/wt51/engine.py $5" name=ours \
    option.show_detail=2 $3 $P15 --games 100 --seed $4 --out runs/s51/$2 > runs/s51/$2.log 2>&1
}
AIW="cmd=$S/pbrain-wine name=aiwine"
run 0 aiwine-15-4115 "$AIW" 4115 "" & run 1 cand-aiwine-15-4115 "$AIW" 4115 "$CAND" & wait
echo done > runs/s51/matches2.done
