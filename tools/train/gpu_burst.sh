#!/usr/bin/env bash
# A short, bounded supervised training burst on a GPU machine (or the CPU): see tools/train/gpu_burst.py.
#
#   bash tools/train/gpu_burst.sh                      # defaults: runs/sl/gomocup2024.npz -> $OUT
#   OUT=/tmp/burst BURST_SECONDS=60 bash tools/train/gpu_burst.sh --steps 2000 --blocks 4 --channels 32
#
# Environment: OUT (output folder; default runs/gpu-burst), DATA (shard; default
# runs/sl/gomocup2024.npz), BURST_SECONDS (training time bound; default 300), PYTHON (default
# .venv/bin/python when present, else python3). Extra arguments go to tools/train/gpu_burst.py.
# The whole command is also killed after BURST_SECONDS + 240 s (loading, export, check).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-runs/gpu-burst}"
DATA="${DATA:-runs/sl/gomocup2024.npz}"
BURST_SECONDS="${BURST_SECONDS:-300}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if [ ! -f "$DATA" ]; then
  echo "gpu_burst.sh: no training shard at $DATA (make it with: gomoku train pack ...)" >&2
  exit 2
fi
mkdir -p "$OUT"
"$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
exec timeout --kill-after=10 "$((BURST_SECONDS + 240))" \
  "$PYTHON" -m tools.train.gpu_burst --data "$DATA" --out "$OUT" --max-seconds "$BURST_SECONDS" "$@"
