#!/usr/bin/env bash
# Starts a data-parallel training under mpiexec, stops (SIGSTOP: a hung rank) or kills (SIGKILL: a
# dead rank) the highest rank once training is under way, and checks that the job ends by itself,
# non-zero, within the collective timeout plus a margin, with the expected report.
#   fault_injection.sh stop|kill MPIEXEC DTNN CONFIG RANKS TIMEOUT_S REGEX   (TIMEOUT_S: whole seconds)
set -u
mode=$1 mpiexec=$2 dtnn=$3 config=$4 ranks=$5 timeout_s=$6 regex=$7
log=$(mktemp)
# Child processes of a pid, from /proc (procps may not be installed).
children() {
  for stat in /proc/[0-9]*/stat; do
    read -r pid _ _ ppid _ <"$stat" 2>/dev/null && [ "$ppid" = "$1" ] && echo "$pid"
  done
}
trap 'rm -f "$log"' EXIT

"$mpiexec" -n "$ranks" "$dtnn" run "$config" --set output.progress=lines --timeout "$timeout_s" \
  >"$log" 2>&1 &
job=$!

# Training is under way once the second epoch has been reported.
for _ in $(seq 600); do
  grep -q "^Epoch 2/" "$log" && break
  kill -0 "$job" 2>/dev/null || { echo "FAIL: the job ended before the fault"; cat "$log"; exit 1; }
  sleep 0.1
done
victim_rank=$((ranks - 1))
victim=""
for p in $(children "$job"); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$victim_rank"; then
    victim=$p
  fi
done
[ -n "$victim" ] || { echo "FAIL: rank $victim_rank's process not found"; cat "$log"; exit 1; }
signal=STOP
[ "$mode" = kill ] && signal=KILL
echo "sending SIG$signal to rank $victim_rank (pid $victim)"
kill -"$signal" "$victim"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(now_ms)

# The job must end on its own within the timeout and a margin for start-up of MPI_Abort.
limit=$((timeout_s + 30))
while kill -0 "$job" 2>/dev/null; do
  if [ $(($(now_ms) - start)) -gt $((limit * 1000)) ]; then
    echo "FAIL: the job still runs ${limit} s after the fault"
    kill -KILL $(children "$job") "$job"; cat "$log"; exit 1
  fi
  sleep 0.1
done
wait "$job"
code=$?
took=$(($(now_ms) - start))
cat "$log"
echo "job ended with exit code $code, ${took} ms after the fault"
[ "$code" -ne 0 ] || { echo "FAIL: exit code 0"; exit 1; }
grep -Eq "$regex" "$log" || { echo "FAIL: no line matches: $regex"; exit 1; }
echo "PASS"
