#!/usr/bin/env bash
# `srun ufno_predict` as users run it, on a single-node Slurm stood up here for the test:
# munged (unless one already runs), slurmctld and slurmd with a minimal slurm.conf (MpiDefault=pmix,
# the node as `slurmd -C` describes it on 127.0.0.1, proctrack/linuxproc, task/none, ports of
# its own), then:
#   1. srun -n 1 and srun -n 2 --grid 2x1 predictions, compared (relative L2 <= 1e-6);
#   2. a --cases batch with a bad case on 2 tasks: every task exits 3, the good case is written;
#   3. an sbatch --wait job;
#   4. a bad --grid: every task exits 2, no output;
#   5. srun -c 1: one thread, from SLURM_CPUS_PER_TASK.
# The daemons it started are stopped by PID at the end. It never touches a machine that already
# runs Slurm: it skips (exit 77, CTest's SKIP) when slurmctld runs, when it is not root, or when
# Slurm is not installed. Usage: test_slurm.sh BUILD_DIR. Prints "N passed, M failed".
set -uo pipefail
BUILD=$(cd "${1:?usage: test_slurm.sh BUILD_DIR}" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PREDICT="$BUILD/apps/ufno_predict"
EXAMPLE="$ROOT/examples/opm/s1_i000087/case.h5"

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root to start slurmctld, slurmd and munged"
for b in slurmctld slurmd srun sbatch sinfo munged munge; do
  command -v "$b" > /dev/null || skip "$b is not installed (apt-get install slurmd slurmctld slurm-client munge)"
done
pgrep -x slurmctld > /dev/null && skip "slurmctld already runs on this machine; not disturbing it"
[ -x "$PREDICT" ] || { echo "missing $PREDICT"; exit 1; }

W=$(mktemp -d /tmp/ufno_slurm_XXXXXX)
chmod 755 "$W"
STARTED_MUNGE=0
cleanup() {
  for f in "$W/slurmd.pid" "$W/slurmctld.pid"; do
    [ -f "$f" ] && kill "$(cat "$f")" 2> /dev/null
  done
  sleep 1
  for f in "$W/slurmd.pid" "$W/slurmctld.pid"; do
    [ -f "$f" ] && kill -9 "$(cat "$f")" 2> /dev/null
  done
  # Any daemon of this instance that did not write its PID file: its command line names $W.
  pkill -9 -f "$W/slurm.conf" 2> /dev/null
  [ "$STARTED_MUNGE" = 1 ] && [ -f "$W/munge/munged.pid" ] && kill "$(cat "$W/munge/munged.pid")" 2> /dev/null
  rm -rf "$W"
}
trap cleanup EXIT

passed=0
failed=0
check() {  # check NAME CONDITION-EXIT-STATUS [DETAIL]
  if [ "$2" -eq 0 ]; then
    echo "PASS $1"
    passed=$((passed + 1))
  else
    echo "FAIL $1${3:+: $3}"
    failed=$((failed + 1))
  fi
}

# munge: the installed key, the usual socket directory; a munged that answers is reused.
if ! munge -n > /dev/null 2>&1; then
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge 2> /dev/null
  [ -f /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2> /dev/null; chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key; }
  mkdir -p "$W/munge" && chown munge:munge "$W/munge"
  runuser -u munge -- munged --pid-file="$W/munge/munged.pid" 2> "$W/munged.err" ||
    munged --force --pid-file="$W/munge/munged.pid"
  STARTED_MUNGE=1
  for _ in $(seq 20); do [ -s "$W/munge/munged.pid" ] && break; sleep 0.1; done
fi

NODE=$(slurmd -C | head -1)
NODENAME=$(echo "$NODE" | sed -n 's/^NodeName=\([^ ]*\).*/\1/p')
mkdir -p "$W/state" "$W/spool"
cat > "$W/slurm.conf" << CONF
ClusterName=ufnotest
SlurmctldHost=$NODENAME(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
$NODE NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
sed -i 's/ UpTime=[^ ]*//' "$W/slurm.conf"
export SLURM_CONF="$W/slurm.conf"
slurmctld -f "$SLURM_CONF" || { echo "slurmctld did not start"; cat "$W/slurmctld.log"; exit 1; }
slurmd -f "$SLURM_CONF" || { echo "slurmd did not start"; cat "$W/slurmd.log"; exit 1; }
for _ in $(seq 60); do
  sinfo -h -o %T 2> /dev/null | grep -q idle && break
  sleep 0.5
done
sinfo -h -o %T | grep -q idle || { echo "the node never became idle"; tail -n 20 "$W/slurmctld.log" "$W/slurmd.log"; exit 1; }
cd "$W"
export OMP_NUM_THREADS=1

rel_l2() {  # rel_l2 A B: largest relative L2 difference of SG and dP
  /usr/bin/python3 -c "
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1]), h5py.File(sys.argv[2])
print(max(np.linalg.norm(a[v][()] - b[v][()]) / max(np.linalg.norm(b[v][()]), 1e-30) for v in ('SG', 'dP')))
" "$1" "$2"
}

# 1. One rank and two ranks give the same prediction.
srun -n 1 "$PREDICT" --case "$EXAMPLE" --out one.h5 --threads 1 > one.log 2>&1
check "srun -n 1 ufno_predict exits 0" $? "$(tail -3 one.log)"
srun -n 2 "$PREDICT" --case "$EXAMPLE" --out two.h5 --grid 2x1 --threads 1 > two.log 2>&1
check "srun -n 2 ufno_predict --grid 2x1 exits 0" $? "$(tail -3 two.log)"
if [ -f one.h5 ] && [ -f two.h5 ]; then
  e=$(rel_l2 two.h5 one.h5)
  /usr/bin/python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 1e-6 else 1)" "$e"
  check "2 ranks equal 1 rank (relative L2 $e)" $?
fi

# 2. A batch with a bad case: every task exits 3 (and the good case is written).
mkdir cases
cp "$EXAMPLE" cases/good.h5
echo "not a case" > cases/bad.h5
srun -n 2 --kill-on-bad-exit=0 bash -c "'$PREDICT' --cases cases --out batch_out --threads 1 > batch_\$SLURM_PROCID.log 2>&1; echo \$? > code_\$SLURM_PROCID"
codes="$(cat code_0 code_1 2> /dev/null | tr '\n' ' ')"
[ "$codes" = "3 3 " ]
check "a batch with a bad case: every task exits 3 (got: $codes)" $?
[ -f batch_out/good.h5 ] && [ ! -f batch_out/bad.h5 ]
check "the good case is written, the bad one is not" $?

# 3. sbatch --wait.
cat > job.sh << JOB
#!/bin/bash
#SBATCH -n 1
#SBATCH -c 1
#SBATCH -o $W/job.out
srun "$PREDICT" --case "$EXAMPLE" --out "$W/job.h5"
JOB
sbatch --wait job.sh > sbatch.log 2>&1
check "sbatch --wait job exits 0" $? "$(cat sbatch.log job.out 2> /dev/null | tail -3)"
[ -f job.h5 ]
check "the batch job wrote its prediction" $?

# 4. A bad --grid: every task exits 2, one message, no output.
srun -n 2 --kill-on-bad-exit=0 bash -c "'$PREDICT' --case '$EXAMPLE' --out bad_grid.h5 --grid 3x1 --threads 1 > grid_\$SLURM_PROCID.log 2>&1; echo \$? > gcode_\$SLURM_PROCID"
codes="$(cat gcode_0 gcode_1 2> /dev/null | tr '\n' ' ')"
[ "$codes" = "2 2 " ]
check "a bad --grid: every task exits 2 (got: $codes)" $?
[ ! -e bad_grid.h5 ] && ! ls bad_grid.h5.tmp.* > /dev/null 2>&1
check "a bad --grid leaves no output" $?
grep -q -- "--grid" grid_0.log
check "rank 0 names --grid" $? "$(cat grid_0.log)"

# 5. srun -c 1: one thread, and the summary says where that came from.
srun -n 1 -c 1 "$PREDICT" --case "$EXAMPLE" --out c1.h5 > c1.log 2>&1
grep -q "x 1 thread(s) (SLURM_CPUS_PER_TASK)\|x 1 thread(s) (CPU affinity)" c1.log
check "srun -c 1 runs one thread" $? "$(cat c1.log)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
