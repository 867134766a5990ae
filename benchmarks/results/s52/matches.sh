#!/usr/bin/env bash
# session 52: the default (HEAD, /tmp/wt52) and cpu-s51 side by side on the same seed at the same
# time, one core each; the cores swap between pairings (session 51 always gave the default core 0)
set -u
cd /work/main
S=$HOME/sparring; PY=/work/main/.venv/bin/python
P15="--size 15 --transform --openings ../shared/data/openings/piskvork_openings.txt --openings-order random"
CAND="--model /work/main/runs/cpu-s51/cpu-s51"
run() {  # core name opp-args seed extra
  taskset -c $1 .venv/bin/gomoku tournament --tc 0/1 -j 1 --no-live --quiet cmd="$PY /tmp/wt52/engine.py $5" name=ours \
    option.show_detail=2 $3 $P15 --games 100 --seed $4 --out runs/s52/$2 > runs/s52/$2.log 2>&1
}
AIW="cmd=$S/pbrain-wine name=aiwine"
R100="cmd=$S/rapfi/build/pbrain-rapfi name=rapfi100k nodes=100000"
run 0 aiwine-15-4118 "$AIW" 4118 "" & run 1 cand-aiwine-15-4118 "$AIW" 4118 "$CAND" & wait
run 1 aiwine-15-4119 "$AIW" 4119 "" & run 0 cand-aiwine-15-4119 "$AIW" 4119 "$CAND" & wait
run 0 r100k-15-4116 "$R100" 4116 "" & run 1 cand-r100k-15-4116 "$R100" 4116 "$CAND" & wait
echo done > runs/s52/matches.done
