#!/bin/sh
# lab-check.sh LAB -- `make lab-check LAB=NN`: build and run lab NN's checks
# (the lines of labs/NN-*/checks: "TEST-BINARY | CHECK-CASE | what it checks")
# and say pass or fail for each step. Exit 0 only when every step passes.
set -u
lab=${1:?usage: lab-check.sh LAB}
labdir=$(ls -d labs/"$lab"-* 2>/dev/null | head -1)
[ -n "$labdir" ] && [ -f "$labdir/checks" ] || { echo "lab-check: no checks for lab $lab" >&2; exit 2; }
build=${BUILD:-build}
echo "lab $lab: $(head -1 "$labdir/README.md" | sed 's/^# *//; s/^Lab [0-9]*: *//')"
bins=$(grep -v '^#' "$labdir/checks" | awk -F'|' 'NF { gsub(/ /, "", $1); print $1 }' | sort -u)
for b in $bins; do
  if ! make -s "$build/tests/$b" >"$build/lab-check-$lab.log" 2>&1; then
    echo "  build: FAIL (it does not compile; see $build/lab-check-$lab.log)"
    sed 's/^/    /' "$build/lab-check-$lab.log" | grep -E 'error|warning' | head -10
    exit 1
  fi
done
rm -f "$build/lab-check-$lab.failed"
step=0
grep -v '^#' "$labdir/checks" | while IFS='|' read -r bin tcase what; do
  bin=$(echo "$bin" | tr -d ' ')
  tcase=$(echo "$tcase" | sed 's/^ *//; s/ *$//')
  what=$(echo "$what" | sed 's/^ *//')
  [ -n "$bin" ] || continue
  step=$((step + 1))
  if CK_RUN_CASE="$tcase" THREADLAB_BIN="$build/threadlab" "$build/tests/$bin" \
       >"$build/lab-check-$lab-$step.log" 2>&1 &&
     ! grep -q "Checks: 0," "$build/lab-check-$lab-$step.log"; then
    echo "  step $step: $what: PASS"
  else
    echo "  step $step: $what: FAIL"
    grep -q "Checks: 0," "$build/lab-check-$lab-$step.log" &&
      echo "      no check case '$tcase' in $bin"
    grep -E ':[FE]:' "$build/lab-check-$lab-$step.log" | head -3 | sed 's/^/      /'
    echo fail >>"$build/lab-check-$lab.failed"
  fi
done
if [ -s "$build/lab-check-$lab.failed" ]; then
  rm -f "$build/lab-check-$lab.failed"
  echo "lab $lab: not yet (the steps marked FAIL say what is still wrong)"
  exit 1
fi
echo "lab $lab: every step passes"
