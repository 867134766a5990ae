#!/usr/bin/env bash
# session 24: the 5x48 continued on the H200 on 15x15 and 20x20 positions at once (one fully
# convolutional network; each batch one size), then exported here. Run from the repository root.
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
R=$HOME/sparring/rapfi/build/pbrain-rapfi   # built from github:dhbloo/rapfi, outside the project
# 1. new teacher games (CPU, one core each, nice 5; stopped by hand after about 40 minutes: 1,291 and
#    1,252 games):
#    20x20 from 15x15 Gomocup openings shifted onto the larger board (--records-size 15)
for s in 7:teach20 8:teach20b; do
  $G train teacher --engine $R --nodes 50000 --records ../shared/data/gomocup2024_freestyle15 \
      --records-size 15 --size 20 --games 4000 --min-plies 4 --max-plies 14 --seed ${s%%:*} \
      --out runs/${s#*:} &
done
#    and a few more 15x15 games (seed 6; 173 games, stopped after 10 minutes for a second 20x20 run)
$G train teacher --engine $R --nodes 50000 --records ../shared/data/gomocup2024_freestyle15 \
    --games 4000 --min-plies 4 --max-plies 14 --seed 6 --out runs/teach15d
wait
# 2. pack them (value target: half the result, half Rapfi's evaluation, as teach15c-mix)
$G train pack --records runs/teach15d/match/games --openings runs/teach15d/openings.txt \
    --eval-weight 0.5 --out $D/teach15d-mix.npz
for r in teach20 teach20b; do
  $G train pack --records runs/$r/match/games --openings runs/$r/openings.txt --size 20 \
      --eval-weight 0.5 --out $D/$r-mix.npz
done
# (the session 23 shards, checkpoints/sl-h200/command.sh step 1, are in $D too)
DATA="$D/gomocup2024.npz $D/teach15.npz $D/teach15b.npz $D/teach15c-mix.npz $D/teach15d-mix.npz \
$D/teach20-mix.npz $D/teach20b-mix.npz"
# 3. device call (carry runs/data): from session 23's 5x48-cont, fresh AdamW, a fifth of the
#    batches 20x20
SWEEP="5x48" BURST_SECONDS=480 MARGIN_SECONDS=60 THREADS=8 PYTHON=python3 \
    bash tools/train/gpu_sweep.sh --data $DATA --batch 1024 --lr 1e-3 --val-every 500 \
    --init checkpoints/sl-h200/5x48-cont.pt --size-share 20x20=0.2
#    -> 5x48-best.pt (step 24,500 of 25,522, 480 s at 54,413 positions/s; torch 2.11.0+cu130 there)
#       = checkpoints/mix-h200/5x48-mix.pt; its log and summary are beside it
# 4. here: export (both boards recorded) and the int8 graph (calibrated on Gomocup positions)
$G train export --checkpoint checkpoints/mix-h200/5x48-mix.pt --out models/freestyle-5x48-mix \
    --name freestyle-5x48-mix --size 15 20 --n 5 --rule freestyle \
    --notes "freestyle15-5x48-sl continued on the H200 on 15x15 and 20x20 Rapfi games (a fifth of the batches 20x20): 24,500 more steps x 1,024"
$G train quantize models/freestyle-5x48-mix --data $D/gomocup2024.npz
