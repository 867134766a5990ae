#!/usr/bin/env bash
# The data of the session-44, -45 and -46 fine-tunes (sourced by ../ft15-s44/command.sh,
# ../ft15-s45/command.sh and ../vh15-s46/command.sh, which set -euo pipefail): the 15x15 shards in runs/data and $DATA, their
# list, with the held-out parts packed on their own (teach15e-test, teach15f-test, teach15g-test).
# A split shard already packed is kept, so a second run resumes where the first left off.
# It also defines export_and_screen, the recipes' step 3 (at the end of this file).
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
# 1. the data: the older shards as in checkpoints/ft15-s42/command.sh; teacher15e cut at game 1384
#    and teacher15f at 470 (symlink folders of the game files); teacher15h (the same kind of
#    openings as 15f, Rapfi at 50,000/55,000 nodes) without the games from an opening of 15f's
#    held-out part; teacher15g (five stones, 30 games) held out whole
split() {   # split RUN CUT: runs/split/RUN-train (games < CUT) and RUN-test (the rest)
  local run=$1 cut=$2
  mkdir -p runs/split/$run-train runs/split/$run-test
  for f in runs/teach$run/match/games/*.sgf; do
    local b; b=$(basename "$f"); local n=$((10#${b%%-*}))
    if [ "$n" -lt "$cut" ]; then ln -sf "$PWD/$f" runs/split/$run-train/; else ln -sf "$PWD/$f" runs/split/$run-test/; fi
  done
  for s in train test; do
    [ -n "$(ls runs/split/$run-$s)" ] || continue   # teacher15g: no training part
    [ -f $D/teach$run-$s.npz ] && continue            # packed by an earlier run of this script
    $G train pack --records runs/split/$run-$s --openings runs/teach$run/openings.txt --eval-weight 0.5 \
        --out $D/teach$run-$s.npz
  done
}
split 15e 1384
split 15f 470
split 15g 0
mkdir -p runs/split/15h-train
.venv/bin/python - <<'PY'
import json, os
from gomoku_ai.training.teacher import opening_shape
def rows(run):
    return [json.loads(l) for l in open(f"runs/{run}/match/results.jsonl")]
held = {opening_shape([tuple(m) for m in r["moves"][:r["opening_plies"]]])
        for r in rows("teach15f") if r["game"] >= 470}
kept = 0
for r in rows("teach15h"):
    if opening_shape([tuple(m) for m in r["moves"][:r["opening_plies"]]]) in held:
        continue
    name = f"{r['game']:06d}-{r['black']}-vs-{r['white']}.sgf"
    if not os.path.lexists(f"runs/split/15h-train/{name}"):   # made by an earlier run of this script
        os.symlink(os.path.abspath(f"runs/teach15h/match/games/{name}"), f"runs/split/15h-train/{name}")
    kept += 1
print(json.dumps({"teach15h_games_kept": kept}))
PY
$G train pack --records runs/split/15h-train --openings runs/teach15h/openings.txt --eval-weight 0.5 \
    --out $D/teach15h-train.npz
$G train pack --records ../shared/data/gomocup2024_freestyle15 \
    --openings ../shared/data/openings/gomocup2024_freestyle15_derived.txt --out $D/gomocup2024.npz
$G train pack --records runs/teach15/match/games --openings runs/teach15/openings.txt --out $D/teach15.npz
$G train pack --records runs/teach15b/match/games --openings runs/teach15b/openings.txt --out $D/teach15b.npz
for r in teach15c teach15d; do
  $G train pack --records runs/$r/match/games --openings runs/$r/openings.txt --eval-weight 0.5 \
      --out $D/$r-mix.npz
done
DATA="$D/gomocup2024.npz $D/teach15.npz $D/teach15b.npz $D/teach15c-mix.npz $D/teach15d-mix.npz \
$D/teach15e-train.npz $D/teach15f-train.npz $D/teach15h-train.npz"

# step 3 of each recipe: export CHECKPOINT as OUTDIR/NAME (15x15 freestyle, NOTES as its notes), its int8
# graph, and the held-out screen of the start network and it on the three test splits
export_and_screen() {   # export_and_screen CHECKPOINT OUTDIR NAME NOTES
  local ck=$1 out=$2/$3 name=$3 notes=$4
  $G train export --checkpoint "$ck" --out "$out" --name "$name" --size 15 --n 5 --rule freestyle \
      --notes "$notes"
  $G train quantize "$out" --data $D/gomocup2024.npz
  for t in teach15e-test teach15f-test teach15g-test; do
    for m in models/freestyle-5x48-mix.int8.onnx "$out.int8.onnx"; do
      $G train accuracy --data $D/$t.npz --val-fraction 1.0 $m
    done
  done
}
