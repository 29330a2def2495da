#!/usr/bin/env bash
# One training command on a GPU machine: train NAME for MINUTES of training time, resuming from
# its checkpoint, and, once its schedule is spent, export the best epoch as a model file.
#
# Usage: bash scripts/gpu-train.sh NAME VARIABLE [python3 -m ufno.train arguments]
# Environment:
#   MINUTES        training minutes of this command (default 7)
#   TOTAL_MINUTES  the training minutes the cosine schedule spans over all the commands of NAME
#                  (default MINUTES: one command trains it whole)
#   DATA           a pack or a directory holding VARIABLE.ufnopack or NAME_VARIABLE.ufnopack
#                  (default gpu-data; python3 -m ufno.pack makes them)
#   DEVICE         auto (default: cuda where PyTorch sees a GPU), cuda or cpu
#   RESUME         checkpoint parts of an earlier command, brought back (default gpu-data/NAME)
#   OUT            where the returned files go (default gpu-out)
#   WORK           the run directory, ignored by git, so it stays between the commands of a
#                  machine kept warm (default build-train)
#   PYTHON         the interpreter (default python3)
# What it writes to $OUT (the files that come back: at most 8 of at most 16 MiB each):
#   NAME/checkpoint.json and NAME/checkpoint.eEPOCH.partN (ufno.train --checkpoint-parts,
#   refreshed after every epoch: float32 up to 32 MiB, else float16), NAME.h5 (the best epoch,
#   once the schedule is spent, where it is at most 16 MiB; else python3 -m ufno.export_checkpoint
#   exports it from the returned NAME/) and gpu-train.log (refreshed every 20 s, so a command
#   cut short still returns what was done).
# The training: python3 -m ufno.train --device $DEVICE --schedule cosine-time --cosine-minutes
# TOTAL_MINUTES --minutes MINUTES; on a GPU batch 32, the learning rate scaled from batch 4 by
# the square root of the ratio, the network's own forward (cuFFT); arguments given after
# VARIABLE go last and win (--batch 64, --tf32, --width 16 --modes 8 8 8, --init FILE.pt).
# A later command resumes from WORK/NAME/checkpoint.pt where the machine kept it, else from the
# parts in RESUME (copy the returned NAME/ folder to gpu-data/NAME/ and carry gpu-data).
# DEVICE=cpu PYTHON=/usr/bin/python3 rehearses it on a machine without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
usage="usage: gpu-train.sh NAME VARIABLE [python3 -m ufno.train arguments]"
NAME=${1:?$usage}
VAR=${2:?$usage}
shift 2
MIN=${MINUTES:-7}
TOTAL=${TOTAL_MINUTES:-$MIN}
DATA=${DATA:-gpu-data}
DEVICE=${DEVICE:-auto}
RESUME=${RESUME:-gpu-data/$NAME}
OUT=${OUT:-$(pwd)/gpu-out}
WORK=${WORK:-build-train}
PY=${PYTHON:-python3}
if ! [[ "$NAME" =~ ^[A-Za-z0-9_.-]+$ ]]; then
  echo "gpu-train: NAME '$NAME': letters, digits, . _ - only" >&2
  exit 2
fi
if [ "$VAR" != SG ] && [ "$VAR" != dP ]; then
  echo "gpu-train: VARIABLE '$VAR': SG or dP" >&2
  exit 2
fi
for v in "MINUTES=$MIN" "TOTAL_MINUTES=$TOTAL"; do
  if ! awk -v m="${v#*=}" 'BEGIN { exit !(m + 0 > 0 && m + 0 <= 600) }'; then
    echo "gpu-train: ${v%%=*} must be a number in (0, 600], not '${v#*=}'" >&2
    exit 2
  fi
done
mkdir -p "$OUT/$NAME" "$WORK"
LOG=$OUT/gpu-train.log
RUNLOG=$WORK/$NAME.out
{
  echo "gpu-train: $(date -u) $NAME $VAR, $MIN of $TOTAL minutes, device $DEVICE, data $DATA"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -2
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
} > "$WORK/$NAME.probe" 2>&1

collect() {  # the logs in one returned file, written whole and renamed
  { cat "$WORK/$NAME.probe"
    [ -e "$RUNLOG" ] && { echo "== ufno.train"; cat "$RUNLOG"; }
    [ -e "$WORK/$NAME/log.csv" ] && { echo "== log.csv"; cat "$WORK/$NAME/log.csv"; }
  } > "$LOG.tmp" 2>&1
  mv "$LOG.tmp" "$LOG"
}

# The command ends after MINUTES of training (at an epoch's end), or when the schedule is
# spent (mid-epoch if need be); loading the data and scoring are not training time, so the
# hard limit leaves room for them.
limit=$(awk -v m="$MIN" 'BEGIN { printf "%d", m * 60 + 300 }')
rm -f "$OUT/$NAME.h5"
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  timeout -k 10 "$limit" "$PY" -m ufno.train --data "$DATA" --variable "$VAR" \
  --run "$WORK/$NAME" --device "$DEVICE" --schedule cosine-time --cosine-minutes "$TOTAL" \
  --minutes "$MIN" --epochs 100000 --checkpoint-parts "$OUT/$NAME" --resume-from "$RESUME" \
  --export "$WORK/$NAME.h5" "$@" > "$RUNLOG" 2>&1 &
pid=$!
(while sleep 20; do collect; done) &
collector=$!
wait "$pid"
status=$?
kill "$collector" 2>/dev/null
wait "$collector" 2>/dev/null
# The model file only when this command finished the schedule (an earlier one's stays out).
# A model file over 16 MiB (width 16 with modes 8 and wider) cannot come back: it is exported
# from the returned parts instead (python3 -m ufno.export_checkpoint NAME/ OUT.h5).
if [ "$status" -eq 0 ] && grep -q "train_ufno: exported" "$RUNLOG"; then
  if [ "$(stat -c %s "$WORK/$NAME.h5")" -le $((16 << 20)) ]; then
    cp "$WORK/$NAME.h5" "$OUT/$NAME.h5.tmp" && mv "$OUT/$NAME.h5.tmp" "$OUT/$NAME.h5"
  else
    echo "gpu-train: $NAME.h5 is over 16 MiB; export it from the parts:" \
      "PYTHONPATH=python python3 -m ufno.export_checkpoint $NAME OUT.h5" >> "$RUNLOG"
  fi
fi
collect
{
  echo "== returned files"
  ( cd "$OUT" && find . -type f -printf '%s %p\n' | sort -k2 )
  n=$(find "$OUT" -type f | wc -l)
  big=$(find "$OUT" -type f -size +16M | wc -l)
  total=$(find "$OUT" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
  if [ "$n" -gt 8 ] || [ "$big" -gt 0 ] || [ "$total" -gt $((64 << 20)) ]; then
    echo "gpu-train: $n files, $big over 16 MiB, $total bytes: more than comes back"
  fi
} >> "$LOG"
if [ "$status" -ne 0 ]; then
  echo "gpu-train: ufno.train exited with $status ($LOG)" >&2
fi
exit "$status"
