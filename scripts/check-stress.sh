#!/bin/sh
# check-stress.sh N [HOGS] -- run `make check` N times in a row beside
# HOGS busy loops (default 2, one per core of a 2-core machine), which it
# starts before the first run and stops when it ends, however it ends.
# A test that passes only on a quiet machine is a test that fails in CI:
# this is the proof that the suite bounds what the code controls.
#
# Prints each run's result as it ends, every failing test by name with its
# failing lines, and at the end how many runs passed. Exits 0 only when
# every run passed. The runs' logs stay in build/stress/RUN/.
set -u
n=${1:-10}
hogs=${2:-2}
case $n in ''|*[!0-9]*|0) echo "check-stress: N must be a positive number, not '$n'" >&2; exit 2;; esac
case $hogs in ''|*[!0-9]*) echo "check-stress: HOGS must be a number, not '$hogs'" >&2; exit 2;; esac
make=${MAKE:-make}

hog_pids=""
stop_hogs() {
  [ -n "$hog_pids" ] && kill $hog_pids 2>/dev/null
  hog_pids=""
}
trap 'stop_hogs' EXIT
trap 'stop_hogs; exit 130' INT TERM
i=0
while [ "$i" -lt "$hogs" ]; do
  # a shell loop, not yes(1): nothing to install, nothing written
  sh -c 'while :; do :; done' &
  hog_pids="$hog_pids $!"
  i=$((i + 1))
done
echo "check-stress: $n runs of make check beside $hogs CPU hogs (pids$hog_pids)"

passed=0 run=1 failures=""
while [ "$run" -le "$n" ]; do
  logs=build/stress/$run
  rm -rf "$logs"; mkdir -p "$logs"
  started=$(date +%s)
  $make -s check CHECK_LOGS="$logs" >"$logs/make.log" 2>&1
  rc=$?
  secs=$(($(date +%s) - started))
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "run $run/$n: passed ($secs s)"
  else
    failed=$(sed -n 's/^== FAILED: //p' "$logs/make.log")
    echo "run $run/$n: FAILED ($secs s): ${failed:-make check itself (see $logs/make.log)}"
    for t in $failed; do
      failures="$failures $t"
      log="$logs/$(echo "$t" | tr / _).log"
      [ -f "$log" ] && grep -E ':[FE]:|FAIL|not ok' "$log" | head -5 | sed 's/^/    /'
    done
  fi
  run=$((run + 1))
done
stop_hogs
echo "check-stress: $passed of $n runs passed beside $hogs CPU hogs"
if [ -n "$failures" ]; then
  echo "check-stress: failures by test:"
  for t in $failures; do echo "$t"; done | sort | uniq -c | sed 's/^/  /'
fi
[ "$passed" = "$n" ]
