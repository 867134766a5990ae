#!/usr/bin/env bash
# session 23: supervised networks trained on the H200 device machine (two calls of the `device` tool),
# then exported and quantized here. Run from the repository root.
set -euo pipefail
G=.venv/bin/gomoku
D=runs/data
# 1. the data (797,162 positions): Gomocup 2024 and the three Rapfi teacher runs (checkpoints/teacher15*;
#    unpack each match.tar.xz (`tar xJf`; gzip before session 24) into runs/teach15*/match first, as their READMEs say)
$G train pack --records ../shared/data/gomocup2024_freestyle15 \
    --openings ../shared/data/openings/gomocup2024_freestyle15_derived.txt --out $D/gomocup2024.npz
$G train pack --records runs/teach15/match/games --openings runs/teach15/openings.txt --out $D/teach15.npz
$G train pack --records runs/teach15b/match/games --openings runs/teach15b/openings.txt --out $D/teach15b.npz
$G train pack --records runs/teach15c/match/games --openings runs/teach15c/openings.txt --eval-weight 0.5 \
    --out $D/teach15c-mix.npz
DATA="$D/gomocup2024.npz $D/teach15.npz $D/teach15b.npz $D/teach15c-mix.npz"
# 2. device call 1 (carry runs/data; 507 s on the machine): three towers at once, 470 s each
#    -> 5x48.pt, 6x64.pt (the best validation pass of each; 8x96's weights are not kept, only its log)
SWEEP="5x48 6x64 8x96" BURST_SECONDS=470 MARGIN_SECONDS=60 THREADS=4 PYTHON=python3 \
    bash tools/train/gpu_sweep.sh --data $DATA --batch 1024 --lr 2e-3 --val-every 500
# 3. device call 2 (carry runs/data and 5x48.pt; 164 s): 5x48 continued alone, fresh AdamW, 130 s
#    -> 5x48-cont.pt
SWEEP="5x48" BURST_SECONDS=130 MARGIN_SECONDS=30 THREADS=8 PYTHON=python3 \
    bash tools/train/gpu_sweep.sh --data $DATA --batch 1024 --lr 1e-3 --val-every 500 \
    --init runs/s23/sweep/5x48-best.pt
# 4. here: export and int8 graph (calibrated on Gomocup positions)
$G train export --checkpoint checkpoints/sl-h200/5x48.pt --out models/freestyle15-5x48-sl \
    --name freestyle15-5x48-sl --size 15 --n 5 --rule freestyle \
    --notes "supervised on the H200: Gomocup 2024 + 10,738 Rapfi games, 8,500 steps x 1,024"
$G train quantize models/freestyle15-5x48-sl --data $D/gomocup2024.npz
