#!/bin/bash
# run-all.sh -- what `make check` runs: every Check binary and every shell
# test, each even when another one failed, up to CHECK_JOBS of them at once
# (default 3). Most tests spend their time waiting (stop timeouts, idle
# timeouts, a lab handout's stubs that never answer), not computing, so
# running a few side by side takes make check from about 13 minutes to
# about 5 on a 2-core machine; every test must pass beside busy cores
# anyway. CHECK_JOBS=1 runs them one by one, as before.
#
# Each test's output is kept in LOGDIR and shown whole when the test ends;
# at the end the failures are listed again, with their failing lines, so the
# last screen of a long run (or of CI) says what broke without scrolling
# back. The line before them gives the seconds each test took.
#   usage: tests/run-all.sh LOGDIR TEST... (a test is a binary or a run.sh;
#          give the longest first: they start in that order)
# Needs THREADLAB_BIN and THREADLAB_BOARD_DIR in the environment.
#
# Each test gets its own board folder (THREADLAB_BOARD_DIR/NAME), so tests
# running at once never see each other's servers. A test that leaves a
# board behind (one of a process that is gone) fails: users' `threadlab
# top` would list it, and a full board folder is a bug.
#
# A hang guard, not a bound: a test still running after CHECK_HANG_GUARD
# seconds (default 1200, four times the slowest test under ThreadSanitizer)
# has its processes listed in its log, is killed with all of them (it runs
# in a session of its own), and fails, so that a hang names itself instead
# of holding make check until CI's own limit.
set -u
logdir=$1; shift
mkdir -p "$logdir"
jobs=${CHECK_JOBS:-3}
case $jobs in ''|*[!0-9]*|0) echo "run-all: CHECK_JOBS must be a positive number, not '$jobs'" >&2; exit 2;; esac
boards=${THREADLAB_BOARD_DIR:?run-all: THREADLAB_BOARD_DIR must be set}
guard=${CHECK_HANG_GUARD:-1200}
case $guard in ''|*[!0-9]*|0) echo "run-all: CHECK_HANG_GUARD must be a positive number of seconds, not '$guard'" >&2; exit 2;; esac

name_of() { echo "$1" | tr / _; }

# stale_boards DIR: the boards in DIR whose process is gone.
stale_boards() {
  for b in "$1"/*.board; do
    [ -e "$b" ] || continue
    pid=$(basename "$b" .board); pid=${pid%%.*}     # PID.board or PID.N.board
    [ -d "/proc/$pid" ] || echo "$b"
  done
}

# run_one TEST: run it with its own board folder; its output, exit status
# and seconds go to LOGDIR/NAME.log, .rc and .secs.
run_one() {
  local t=$1 name log dir started rc left
  name=$(name_of "$t"); log="$logdir/$name.log"; dir="$boards/$name"
  mkdir -p -m 700 "$dir"
  started=$(date +%s)
  # setsid: the test leads a session of its own, so that the guard can
  # list and kill every process it started (run_one is a background job,
  # never a group leader, so setsid execs the test under its own pid).
  THREADLAB_BOARD_DIR=$dir setsid -w "$t" >"$log" 2>&1 </dev/null &
  local tpid=$!
  echo "$tpid" >"$log.session"       # for an interrupt: see stop_tests
  # Whichever ends first, the test or the guard's sleep: an event each,
  # awaited with wait -n, no polling.
  sleep "$guard" </dev/null >/dev/null 2>&1 &
  local guard_pid=$! ended=""
  echo "$guard_pid" >"$log.guard"   # a background sleep ignores Ctrl-C: see stop_tests
  wait -n -p ended "$tpid" "$guard_pid" 2>/dev/null
  rc=$?
  if [ "$ended" != "$tpid" ]; then
    { echo "FAIL: $t still running after the ${guard} s hang guard; its processes:"
      ps -o pid,etimes,stat,args -s "$tpid"
    } >>"$log"
    kill -KILL -- "-$tpid" 2>/dev/null
    wait "$tpid" 2>/dev/null        # (bash would say "Killed" of a guarded test)
    rc=$?
  fi
  kill "$guard_pid" 2>/dev/null
  rm -f "$log.guard"
  rm -f "$log.session"
  left=$(stale_boards "$dir")
  if [ -n "$left" ]; then
    echo "FAIL: $t left $(echo "$left" | wc -l) stale board(s): $(echo $left)" >>"$log"
    rm -f $left
    rc=1
  fi
  rmdir "$dir" 2>/dev/null
  echo "$rc" >"$log.rc"
  echo $(($(date +%s) - started)) >"$log.secs"
}

# report TEST: show a finished test's output under its name.
report() {
  local log="$logdir/$(name_of "$1").log"
  echo "== $1 ($(cat "$log.secs") s, exit $(cat "$log.rc"))"
  cat "$log"
}

# stop_tests: on Ctrl-C (or a TERM, a HUP), kill every running test's
# session, and its guard's sleep: a test in a session of its own does not
# get the terminal's SIGINT, and would run on after make check has gone.
stop_tests() {
  for f in "$logdir"/*.session; do
    [ -e "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
    rm -f "$f"
  done
  for f in "$logdir"/*.guard; do     # and the guards' sleeps
    [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null
    rm -f "$f"
  done
  echo "run-all: interrupted; the running tests were killed" >&2
  exit 130
}
rm -f "$logdir"/*.session "$logdir"/*.guard
trap stop_tests INT TERM HUP

declare -A pid_of_test=()
pending=("$@")
while [ ${#pending[@]} -gt 0 ] || [ ${#pid_of_test[@]} -gt 0 ]; do
  # Start tests while there is room; then wait for any one to end.
  while [ ${#pending[@]} -gt 0 ] && [ ${#pid_of_test[@]} -lt "$jobs" ]; do
    t=${pending[0]}; pending=("${pending[@]:1}")
    run_one "$t" &
    pid_of_test[$t]=$!
  done
  wait -n
  for t in "${!pid_of_test[@]}"; do
    if ! kill -0 "${pid_of_test[$t]}" 2>/dev/null; then
      wait "${pid_of_test[$t]}"
      unset "pid_of_test[$t]"
      report "$t"
    fi
  done
done

failed="" timings=""
for t in "$@"; do
  log="$logdir/$(name_of "$t").log"
  timings="$timings $(cat "$log.secs")s:$(basename "$(dirname "$t")")/$(basename "$t")"
  [ "$(cat "$log.rc")" = 0 ] || failed="$failed $t"
done
# Where the time went: make check's budget is 6 minutes on a quiet 2-core
# machine, and this line says which test to look at when it is not.
echo "== seconds per test (CHECK_JOBS=$jobs):$timings"
[ -z "$failed" ] && exit 0
echo
echo "== FAILED:$failed"
for t in $failed; do
  log="$logdir/$(name_of "$t").log"
  echo "-- $t (exit $(cat "$log.rc"); whole output in $log)"
  # Check reports file:line:F|E:...; the shell tests say FAIL; sanitizers
  # say ERROR or WARNING.
  grep -E ':[FE]:|FAIL|ERROR|WARNING|Assertion|timed out' "$log" | head -20
done
exit 1
