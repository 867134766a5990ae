#!/usr/bin/env bash
# Everything the next GPU burst trains on, built here (on the CPU) into one folder that the device call
# carries, and the burst's own command written beside it, so that a session lent the device makes one
# call (checkpoints/README.md, "The next GPU burst").
#
#   bash tools/train/burst_data.sh            # 10-15 minutes on one core the first time; idempotent
#
# Writes $D (default runs/data): one packed shard per teacher run of checkpoints/teacher*/ (each
# archive unpacked under runs/ and packed as its README says; a shard already in $D is kept), copies of
# the shards committed packed (teacher15e, teacher20e/f, teacher20-edge, ann20-s46, ann20-s48), the DAgger shards
# of sessions 47-49 ($D/dagger15 from checkpoints/ann15-s46; $D/dagger15y, the burst's, with ann15-s48 and ann15-s49 too),
# $D/shards.txt (the --data list) and $D/burst.sh, the command to run there.
# Then it prints what would travel to the device and the exact calls. Needs .venv (make .venv/.installed-test).
# Environment: D (output folder), SECONDS_TRAIN (the burst's training seconds; default 480).
set -euo pipefail
cd "$(dirname "$0")/../.."
G=.venv/bin/gomoku
PY=.venv/bin/python
D="${D:-runs/data}"
SECONDS_TRAIN="${SECONDS_TRAIN:-480}"
C=checkpoints
mkdir -p "$D"

data=""        # the burst's --data: every shard below, in the order it is made
use() { test -s "$D/$1" || { echo "burst_data.sh: $D/$1 is missing" >&2; exit 1; }; data="$data $D/$1"; }

# pack NAME SHARD [pack options...]: checkpoints/NAME/match.tar.xz unpacked into runs/<run>/match, packed to $D/SHARD
pack() {
  local name=$1 shard=$2 run
  shift 2
  run=runs/${name/teacher/teach}
  if [ -s "$D/$shard" ]; then echo "kept   $D/$shard"; use "$shard"; return; fi
  if [ ! -d "$run/match/games" ]; then      # unpacked whole or not at all: an interrupted unpack is redone
    rm -rf "$run/match.part" && mkdir -p "$run/match.part"
    tar xJf "$C/$name/match.tar.xz" -C "$run/match.part"
    rm -rf "$run/match" && mv "$run/match.part" "$run/match"
  fi
  cp "$C/$name/openings.txt" "$run/openings.txt"
  "$G" train pack --records "$run/match/games" --openings "$run/openings.txt" "$@" --out "$D/$shard" >/dev/null
  echo "packed $D/$shard"
  use "$shard"
}

if [ -s "$D/gomocup2024.npz" ]; then echo "kept   $D/gomocup2024.npz"; else
  "$G" train pack --records ../shared/data/gomocup2024_freestyle15 \
      --openings ../shared/data/openings/gomocup2024_freestyle15_derived.txt --out "$D/gomocup2024.npz" >/dev/null
  echo "packed $D/gomocup2024.npz"
fi
use gomocup2024.npz
pack teacher15 teach15.npz
pack teacher15b teach15b.npz
pack teacher15c teach15c-mix.npz --eval-weight 0.5
pack teacher15d teach15d-mix.npz --eval-weight 0.5
pack teacher15f teach15f-mix.npz --eval-weight 0.5
pack teacher15h teach15h-mix.npz --eval-weight 0.5
for r in teacher20 teacher20b teacher20c teacher20d; do
  pack "$r" "${r/teacher/teach}-mix.npz" --size 20 --eval-weight 0.5
done
# shards committed packed (their SGF was not kept, or is kept beside them)
for f in teacher15e/teach15e-mix.npz teacher20e/teach20e-mix.npz teacher20e/teach20e2-mix.npz \
         teacher20f/teach20f-mix.npz teacher20f/teach20f2-mix.npz teacher20-edge/edge13-mix.npz \
         teacher20-edge/edge14-mix.npz; do
  cp "$C/$f" "$D/"
  use "${f#*/}"
done
for a in ann20-s46 ann20-s48; do
  cp "$C/$a/annotated.npz" "$D/$a.npz"
  use "$a.npz"
done
# session 47's DAgger shard (Rapfi's answers in our 15x15 games and the positions around them), kept for
# held_out_view.py; then with sessions 48 and 49's annotations too (800 more games): the burst's DAgger
# shard, dagger15's held-out openings still left out (--shapes-from), so that its held-out measure stays fair
# dagger NAME ANNOTATIONS [dagger_pack options...]: $D/NAME/train.npz packed from ANNOTATIONS, kept only when
# $D/NAME/inputs.sha256 says it was packed from the same annotations, options, dagger_pack.py and
# --rapfi-after network (its float graph, which gives the priors)
dagger() {
  local name=$1 anns=$2 stamp priors=models/freestyle-5x48-mix
  shift 2
  local opts=(--rapfi-after "$priors" "$@")
  stamp=$({ printf '%s\n' "${opts[@]}"; cat "$anns" benchmarks/results/s47/dagger_pack.py "$priors.onnx"; } \
      | sha256sum | cut -d' ' -f1)
  if [ -s "$D/$name/train.npz" ] && [ "$(cat "$D/$name/inputs.sha256" 2>/dev/null)" = "$stamp" ]; then
    echo "kept   $D/$name/train.npz"; return
  fi
  "$PY" benchmarks/results/s47/dagger_pack.py "$anns" --out "$D/$name" "${opts[@]}" >/dev/null
  echo "$stamp" > "$D/$name/inputs.sha256"
  echo "packed $D/$name/train.npz"
}
xzcat "$C/ann15-s46/annotations.jsonl.xz" > runs/ann15-s46.jsonl
dagger dagger15 runs/ann15-s46.jsonl
{ cat runs/ann15-s46.jsonl; xzcat "$C/ann15-s48/annotations.jsonl.xz" "$C/ann15-s49/annotations.jsonl.xz"; } \
    > runs/ann15-s46-s49.jsonl
dagger dagger15y runs/ann15-s46-s49.jsonl --shapes-from runs/ann15-s46.jsonl
use dagger15y/train.npz
# the device side: one 5x48 from the shipped network's checkpoint, 30 % of the batches 20x20, the
# DAgger shards weighed as sessions 27 and 47 say; the results come back through $OUT
echo "$data" > "$D/shards.txt"    # the --data list, for the burst and for CPU runs of its recipe (checkpoints/cpu-s50)
cat > "$D/burst.sh" <<EOF
#!/usr/bin/env bash
# written by tools/train/burst_data.sh: the GPU burst, run from the repository root on the device
set -euo pipefail
SWEEP="5x48" BURST_SECONDS=$SECONDS_TRAIN MARGIN_SECONDS=\${MARGIN_SECONDS:-60} THREADS=\${THREADS:-8} \\
    PYTHON=\${PYTHON:-python3} \\
    bash tools/train/gpu_sweep.sh --data$data \\
    --repeat $D/dagger15y/train.npz=10 --repeat $D/ann20-s46.npz=4 --repeat $D/ann20-s48.npz=4 \\
    --batch 1024 --lr 1e-3 --val-every 500 --init $C/mix-h200/5x48-mix.pt --size-share 20x20=0.3
EOF
chmod +x "$D/burst.sh"

X="checkpoints/teacher15 checkpoints/teacher15b checkpoints/teacher15c checkpoints/teacher15d checkpoints/teacher15e"
X="$X checkpoints/teacher15f checkpoints/teacher15g checkpoints/teacher15h checkpoints/teacher20 checkpoints/teacher20b"
X="$X checkpoints/teacher20c checkpoints/teacher20d checkpoints/teacher20e checkpoints/teacher20f checkpoints/teacher20-edge"
X="$X checkpoints/ann15-s46 checkpoints/ann15-s48 checkpoints/ann15-s49 checkpoints/ann20-s46 checkpoints/ann20-s48 benchmarks/results"
tracked=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
left_out=$(git ls-files -z -- $X | xargs -0 du -cb | tail -1 | cut -f1)
carried=$(du -sb "$D" | cut -f1)
total=$((tracked - left_out + carried))
echo "shards: $(echo $data | wc -w), $carried bytes in $D; the tree without the folders below: $((tracked - left_out)) bytes"
echo "travels: $total bytes of the device's 67108864 (tracked + carried; untracked files that git does not ignore come too)"
[ "$total" -lt 67108864 ] || echo "burst_data.sh: OVER the device's 64 MiB: leave more out" >&2
cat <<EOF

A smoke test here first (a few steps of a tiny network on the same data, about a minute):
  $PY -m tools.train.gpu_burst --data$data --repeat $D/dagger15y/train.npz=10 --repeat $D/ann20-s46.npz=4 --repeat $D/ann20-s48.npz=4 --out /tmp/burst-smoke --steps 3 --blocks 1 --channels 8 --batch 64 --device cpu --limit 2000 --size-share 20x20=0.3

Then leave the folders the device does not need out of the travel, call it, and put them back:
  X="$X"
  mkdir -p .git/info && git rm -r -q --cached \$X && for d in \$X; do echo "/\$d/" >> .git/info/exclude; done
  run(command="bash $D/burst.sh", carry=["$D"], timeout_s=$((SECONDS_TRAIN + 100)))
  git reset -q && sed -i '/^\/\(checkpoints\/teacher\|checkpoints\/ann\|benchmarks\/results\)/d' .git/info/exclude && git status --short | head
EOF
