#!/bin/sh
# run-all.sh -- what `make check` runs: every Check binary, then every shell
# test, each even when an earlier one failed. Each one's output is shown as
# it runs and kept in LOGDIR; at the end the failures are listed again, with
# their failing lines, so the last screen of a long run (or of CI) says what
# broke without scrolling back.
#   usage: tests/run-all.sh LOGDIR TEST... (a test is a binary or a run.sh)
# Needs THREADLAB_BIN in the environment.
# A test that leaves a board behind (one of a process that is gone) fails:
# users' `threadlab top` would list it, and a full board folder is a bug.
set -u
logdir=$1; shift
mkdir -p "$logdir"
failed=""

# stale_boards: the boards in THREADLAB_BOARD_DIR whose process is gone.
stale_boards() {
  for b in "${THREADLAB_BOARD_DIR:-/nonexistent}"/*.board; do
    [ -e "$b" ] || continue
    pid=$(basename "$b" .board); pid=${pid%%.*}     # PID.board or PID.N.board
    [ -d "/proc/$pid" ] || echo "$b"
  done
}

for t in "$@"; do
  log="$logdir/$(echo "$t" | tr / _).log"
  echo "== $t"
  # The exit status goes through a file: a pipe into tee would hide it.
  { "$t"; echo $? >"$log.rc"; } 2>&1 | tee "$log"
  left=$(stale_boards)
  if [ -n "$left" ]; then
    echo "FAIL: $t left $(echo "$left" | wc -l) stale board(s): $(echo $left)" | tee -a "$log"
    rm -f $left
    echo 1 >"$log.rc"
  fi
  [ "$(cat "$log.rc")" = 0 ] || failed="$failed $t"
done
[ -z "$failed" ] && exit 0
echo
echo "== FAILED:$failed"
for t in $failed; do
  log="$logdir/$(echo "$t" | tr / _).log"
  echo "-- $t (exit $(cat "$log.rc"); whole output in $log)"
  # Check reports file:line:F|E:...; the shell tests say FAIL; sanitizers
  # say ERROR or WARNING.
  grep -E ':[FE]:|FAIL|ERROR|WARNING|Assertion|timed out' "$log" | head -20
done
exit 1
