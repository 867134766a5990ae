#!/usr/bin/env bash
# session 42: no device. freestyle-5x48-mix (checkpoints/mix-h200/5x48-mix.pt, the 15x15 default)
# fine-tuned 75 minutes on one CPU core in bfloat16, on the 15x15 shards only: Gomocup 2024 and
# the Rapfi teacher games teacher15 to teacher15e (teacher15e at 346 games: the 328 of session 34
# and 18 more). Run from the repository root; unpack each checkpoints/teacher15*/match.tar.xz into
# runs/teach15*/match first, as their READMEs say. taskset -c 0 in session 42, beside a match.
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
C=checkpoints
# 1. the data (829,575 positions)
$G train pack --records ../shared/data/gomocup2024_freestyle15 \
    --openings ../shared/data/openings/gomocup2024_freestyle15_derived.txt --out $D/gomocup2024.npz
$G train pack --records runs/teach15/match/games --openings runs/teach15/openings.txt --out $D/teach15.npz
$G train pack --records runs/teach15b/match/games --openings runs/teach15b/openings.txt --out $D/teach15b.npz
for r in teach15c teach15d teach15e; do
  $G train pack --records runs/$r/match/games --openings runs/$r/openings.txt --eval-weight 0.5 \
      --out $D/$r-mix.npz
done
DATA="$D/gomocup2024.npz $D/teach15.npz $D/teach15b.npz $D/teach15c-mix.npz $D/teach15d-mix.npz $D/teach15e-mix.npz"
# 2. the start network on this run's validation split (trains nothing; base-val-log.jsonl)
$G train supervised --data $DATA --run runs/s42/base15-val --blocks 5 --channels 48 --steps 0 \
    --batch 256 --threads 1 --device cpu --init $C/mix-h200/5x48-mix.pt --precision bf16
# 3. the fine-tune (log.jsonl)
$G train supervised --data $DATA --run runs/s42/ft15 --blocks 5 --channels 48 --steps 100000 \
    --batch 256 --lr 2e-4 --warmup 200 --threads 1 --device cpu --init $C/mix-h200/5x48-mix.pt \
    --precision bf16 --max-seconds 4500 --time-schedule
# 4. export and the int8 graph (one calibration shard per board size)
$G train export --checkpoint runs/s42/ft15/best.pt --out runs/s42/models/freestyle15-5x48-ft \
    --name freestyle15-5x48-ft --size 15 20 --n 5 --rule freestyle \
    --notes "freestyle-5x48-mix fine-tuned 75 min on one CPU core (bf16) on the 15x15 shards only (Gomocup 2024, teacher15 to teacher15e), lr 2e-4 (session 42)"
$G train quantize runs/s42/models/freestyle15-5x48-ft --data $D/gomocup2024.npz
