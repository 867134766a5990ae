#!/usr/bin/env bash
# Several bounded supervised bursts at once on one GPU (e.g. towers to compare), each through
# tools/train/gpu_burst.py with its learning-rate schedule run over the time bound, then their
# results packed to fit the device tool's return limits (at most 8 files of 16 MiB).
#
#   SWEEP="6x64 8x64 8x96" BURST_SECONDS=360 bash tools/train/gpu_sweep.sh \
#       --data runs/data/gomocup2024.npz runs/data/teach15.npz
#
# Environment: OUT (where the packed results go; default runs/gpu-sweep), SWEEP (space-separated
# BLOCKSxCHANNELS, default "6x64 8x96"), BURST_SECONDS (training time of each, all at once; default
# 300), MARGIN_SECONDS (each burst is killed after BURST_SECONDS + this, for loading and export;
# default 180), THREADS (torch CPU threads of each; default 4), PYTHON (default .venv/bin/python when
# present, else python3). Extra arguments go to every gpu_burst.py (--data, --batch, --lr, ...;
# shards of several board sizes train one network, with --size-share 20x20=0.2 for their mix).
# The runs time-slice the GPU: each gets about 1/N of its throughput alone (an H200, 5x48: 19,000
# positions/s beside two others, 52,000 alone), so N at once is for comparing towers in one call.
# Each burst's whole folder is kept under WORK (default /tmp/gpu-sweep). OUT receives, per network:
#   <BxC>-best.pt, <BxC>-last.pt   weights only (no optimizer state): the best validation pass and the
#                                  end of the schedule; `gomoku train export --checkpoint F` reads them
# and logs.tar.gz (every burst's log.jsonl, summary.json, stdout and stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-runs/gpu-sweep}"
WORK="${WORK:-/tmp/gpu-sweep}"
SWEEP="${SWEEP:-6x64 8x96}"
BURST_SECONDS="${BURST_SECONDS:-300}"
THREADS="${THREADS:-4}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
n=0
for a in $SWEEP; do n=$((n + 1)); done
if [ "$n" -gt 3 ]; then
  echo "gpu_sweep.sh: at most 3 networks (2 files each and the logs must fit 8 returned files)" >&2
  exit 2
fi
mkdir -p "$OUT" "$WORK"
"$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
pids=()
for a in $SWEEP; do
  b="${a%x*}"; c="${a#*x}"
  mkdir -p "$WORK/$a"
  timeout --kill-after=10 "$((BURST_SECONDS + ${MARGIN_SECONDS:-180}))" \
    "$PYTHON" -m tools.train.gpu_burst --out "$WORK/$a" --name "burst-$a" --blocks "$b" --channels "$c" \
      --steps 1000000 --max-seconds "$BURST_SECONDS" --time-schedule --threads "$THREADS" "$@" \
      > "$WORK/$a/stdout.txt" 2> "$WORK/$a/stderr.txt" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
for a in $SWEEP; do
  for kind in best:best last:checkpoint; do
    src="$WORK/$a/run/${kind#*:}.pt"
    [ -f "$src" ] || continue
    "$PYTHON" -c 'import sys; from pathlib import Path; from gomoku_ai.training.trainer import save_weights_only
save_weights_only(Path(sys.argv[1]), Path(sys.argv[2]))' "$src" "$OUT/$a-${kind%%:*}.pt"
  done
  tail -n 3 "$WORK/$a/stderr.txt" >&2 || true
done
tar czf "$OUT/logs.tar.gz" -C "$WORK" --exclude='*.pt' --exclude='*.npz' --exclude='*.onnx' .
ls -la "$OUT"
exit "$status"
