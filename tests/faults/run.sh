#!/bin/bash
# run.sh -- `make check-faults`: the shared echo suite's load cases, for every
# model, under each LD_PRELOAD fault shim of tests/shims/:
#   eintr   every thread interrupted by a handled signal at about 1 kHz
#   tinyio  every socket read and write moves 1 to 7 bytes
# Each run must end with 0 errors and every byte echoed (the load case's
# own checks), and the shim must say it injected faults (a shim that did
# not load proves nothing). Under tinyio a case moves at most
# THREADLAB_SUITE_LOAD_BYTES (default 1 MiB): at 1-7 bytes a call, the full
# matrix would take an hour. Under eintr the full matrix runs.
# The eight runs go FAULT_JOBS at once (default 2); each report is printed
# in order once all have ended.
#   usage: tests/faults/run.sh BUILD_DIR   (needs BUILD_DIR/shims/*.so and
#          BUILD_DIR/tests/check_{bio,pool,reactor,multireactor,vthread})
set -u
build=${1:?usage: tests/faults/run.sh BUILD_DIR}
logdir=$build/logs/faults
mkdir -p "$logdir"
tiny_bytes=${THREADLAB_SUITE_LOAD_BYTES:-1048576}
pass=0 fail=0

# injected SHIM LOG: the faults the shim reports over all processes of a
# run ("N signals sent, M delivered" / "N socket calls capped").
injected() {
  case $1 in
    eintr)  sed -n 's/.*signals sent, \([0-9]*\) delivered.*/\1/p' "$2" ;;
    tinyio) sed -n 's/.*: \([0-9]*\) socket calls capped.*/\1/p' "$2" ;;
  esac | awk '{ n += $1 } END { print n + 0 }'
}

# run_one SHIM MODEL: the model's load cases under the shim, its output in
# LOGDIR/SHIM-MODEL.log, its status and seconds beside.
run_one() {
  shim=$1 model=$2
  if [ "$shim" = tinyio ]; then cap=$tiny_bytes; else cap=0; fi
  log="$logdir/$shim-$model.log"
  start=$(date +%s)
  THREADLAB_SUITE_LOAD_BYTES=$cap CK_RUN_CASE=load LD_PRELOAD="$build/shims/$shim.so" \
    "$build/tests/check_$model" >"$log" 2>&1
  echo $? >"$log.rc"
  echo $(( $(date +%s) - start )) >"$log.secs"
}

# FAULT_JOBS runs at once (default 2): the load cases mostly wait on
# loopback, and each run is a process of its own on a port of its own.
jobs=${FAULT_JOBS:-2}
case $jobs in ''|*[!0-9]*|0) echo "faults: FAULT_JOBS must be a positive number, not '$jobs'" >&2; exit 2;; esac
models="bio pool reactor multireactor vthread"
running=0
for shim in eintr tinyio; do
  for model in $models; do
    run_one "$shim" "$model" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  done
done
wait

echo "== tests/faults/run.sh"
for shim in eintr tinyio; do
  if [ "$shim" = tinyio ]; then cap=$tiny_bytes; else cap=0; fi
  if [ "$cap" = 0 ]; then echo "  under $shim: the full cases"
  else echo "  under $shim: each case at most $cap bytes"; fi
  for model in $models; do
    log="$logdir/$shim-$model.log"
    st=$(cat "$log.rc") secs=$(cat "$log.secs")
    faults=$(injected "$shim" "$log")
    result=$(grep -o '[0-9]*%: Checks: [0-9]*, Failures: [0-9]*, Errors: [0-9]*' "$log" | tail -1)
    if [ "$st" = 0 ] && [ "$faults" -gt 0 ]; then
      pass=$((pass + 1))
      echo "  $shim $model: ${result:-no result} ($faults faults injected, ${secs} s)"
    else
      fail=$((fail + 1))
      [ "$faults" -gt 0 ] || echo "  FAIL: $shim $model: the shim injected no faults (did it load?)"
      [ "$st" = 0 ] || echo "  FAIL: $shim $model: ${result:-exit $st} (${secs} s; whole output in $log)"
      grep -E ':[FE]:|timed out' "$log" | head -5 | sed 's/^/    /'
    fi
  done
done
echo "faults: $pass passed, $fail failed"
[ "$fail" = 0 ]
