#!/bin/sh
# run-all.sh -- what `make check` runs: every Check binary, then every shell
# test, each even when an earlier one failed. Each one's output is shown as
# it runs and kept in LOGDIR; at the end the failures are listed again, with
# their failing lines, so the last screen of a long run (or of CI) says what
# broke without scrolling back.
#   usage: tests/run-all.sh LOGDIR TEST... (a test is a binary or a run.sh)
# Needs THREADLAB_BIN in the environment.
set -u
logdir=$1; shift
mkdir -p "$logdir"
failed=""
for t in "$@"; do
  log="$logdir/$(echo "$t" | tr / _).log"
  echo "== $t"
  # The exit status goes through a file: a pipe into tee would hide it.
  { "$t"; echo $? >"$log.rc"; } 2>&1 | tee "$log"
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
