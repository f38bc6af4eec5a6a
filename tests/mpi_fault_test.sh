#!/usr/bin/env bash
# A rank of an `spmd-run --mpi` job that dies (SIGKILL) or hangs (SIGSTOP) mid-run ends the
# whole job with a non-zero exit code and an error naming that rank -- for a hang also the
# collective instruction -- in under twice --collective-timeout, and leaves no process behind.
# For a hang, spmd-run itself ends the job: exit code 1 and one line from rank 0 naming the rank
# that failed first and the collective it did not answer (the other ranks' own lines may blame
# whoever they waited for). A killed rank is mpirun's to report: exit code 137 (128 + SIGKILL).
# The program is tests/testdata/mpi/while_collectives_4.hlo with a loop that never ends.
set -uo pipefail
RUN=tools/spmd-run
TIMEOUT=4
work=$(mktemp -d /tmp/spmd_mpi.XXXXXX)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_vader_single_copy_mechanism=none
# Bazel runs tests in PID namespaces, so two jobs can get the same mpirun pid and job id; their
# shared-memory segments (/dev/shm by default) would then collide. Keep them in $work.
export OMPI_MCA_btl_vader_backing_directory=$work
fail() { echo "FAIL: $*"; exit 1; }
sed 's/constant(20)/constant(2000000000)/' tests/testdata/mpi/while_collectives_4.hlo > "$work/forever.hlo"

# fault SIGNAL: starts the job, sends SIGNAL to the rank 2 process once the loop runs, and
# checks how the job ends.
fault() {
  local signal=$1 log="$work/$1.log"
  mpirun -np 4 --oversubscribe "$RUN" --mpi --partitioned --collective-timeout "$TIMEOUT" \
    --max-gflop 0 "$work/forever.hlo" > "$log" 2>&1 &
  local launcher=$! victim="" ranks=""
  for _ in $(seq 100); do
    ranks=$(pgrep -P "$launcher" | tr '\n' ' ')
    [ "$(wc -w <<< "$ranks")" -eq 4 ] && break
    sleep 0.1
  done
  for pid in $ranks; do
    tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=2' && victim=$pid
  done
  [ -n "$victim" ] || { kill -9 "$launcher" $ranks; fail "$signal: no rank 2 among {$ranks}"; }
  sleep 1.5  # Well into the loop: every rank has met the others thousands of times.
  kill -0 "$launcher" 2>/dev/null || { cat "$log"; fail "$signal: the job ended before the fault"; }
  local start=$(date +%s%N)
  kill "-$signal" "$victim"
  local rc=0 deadline=$(( $(date +%s) + 4 * TIMEOUT ))
  while kill -0 "$launcher" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
  if kill -0 "$launcher" 2>/dev/null; then
    kill -9 "$launcher" $ranks 2>/dev/null
    cat "$log"
    fail "$signal: the job still runs $((4 * TIMEOUT)) s after rank 2 stopped"
  fi
  wait "$launcher" || rc=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$rc" -ne 0 ] || { cat "$log"; fail "$signal: exit code 0"; }
  [ "$ms" -lt $((2000 * TIMEOUT)) ] || { cat "$log"; fail "$signal: took $ms ms (timeout ${TIMEOUT} s)"; }
  case $signal in
    KILL) grep -q 'process rank 2 .*exited on signal 9' "$log" || { cat "$log"; fail "KILL: rank 2 not named"; }
          [ "$rc" -eq 137 ] || { cat "$log"; fail "KILL: exit code $rc, not 137"; } ;;
    STOP) grep -q 'collective %[a-z]* (execution [0-9]*): rank [0-9] timed out .* waiting for rank 2' "$log" ||
            { cat "$log"; fail "STOP: no error naming rank 2 and the collective"; }
          [ "$rc" -eq 1 ] || { cat "$log"; fail "STOP: exit code $rc, not 1"; }
          [ "$(grep -c 'failed first' "$log")" -eq 1 ] ||
            { cat "$log"; fail "STOP: not one line naming the rank that failed first"; }
          grep -q '^spmd-run: error: rank 2 (device 2) failed first: it did not answer at collective %[a-z]* (execution [0-9]*)' "$log" ||
            { cat "$log"; fail "STOP: the job's outcome does not name rank 2 and the collective"; } ;;
  esac
  sleep 0.5
  for pid in $ranks; do
    if [ -e "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
      kill -9 $ranks 2>/dev/null
      fail "$signal: rank process $pid was left behind"
    fi
  done
  echo "$signal: the job ended in $ms ms with exit code $rc"
}

fault KILL
fault STOP
echo "PASS"
