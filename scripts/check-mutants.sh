#!/bin/bash
# check-mutants.sh -- `make check-mutants`: every lab's mutants must fail
# that lab's check (scripts/lab-mutants.sh, one lab at a time per job).
# MUTANT_JOBS labs run at once (default 4: a mutant's check mostly waits on
# its tests, and each lab works in a scratch copy of its own). Each lab's
# report is printed whole when it ends, then the labs whose mutants
# survived are named, with the seconds each lab took.
set -u
jobs=${MUTANT_JOBS:-4}
case $jobs in ''|*[!0-9]*|0) echo "check-mutants: MUTANT_JOBS must be a positive number, not '$jobs'" >&2; exit 2;; esac
make=${MAKE:-make}
logs=$(mktemp -d "${TMPDIR:-/tmp}/check-mutants.XXXXXX") || exit 2
trap 'rm -rf "$logs"' EXIT

labs=""
for d in labs/*/mutants; do labs="$labs $(basename "$(dirname "$d")" | cut -c1-2)"; done

# one LAB: its report to LOGS/LAB.log, its status and seconds beside.
one() {
  started=$(date +%s)
  $make -s lab-mutants LAB="$1" >"$logs/$1.log" 2>&1
  echo $? >"$logs/$1.rc"
  echo $(($(date +%s) - started)) >"$logs/$1.secs"
}

running=0
for lab in $labs; do
  one "$lab" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

failed="" times="" survivors=""
for lab in $labs; do
  echo "== lab $lab: every mutant must fail its check ($(cat "$logs/$lab.secs") s)"
  cat "$logs/$lab.log"
  [ "$(cat "$logs/$lab.rc")" = 0 ] || failed="$failed $lab"
  times="$times $(cat "$logs/$lab.secs")s:$lab"
  survivors="$survivors$(grep '^  mutant ' "$logs/$lab.log" | grep -v ': caught ' |
    sed "s/^  /  lab $lab: /")
"
done
echo "== seconds per lab (MUTANT_JOBS=$jobs):$times"
if [ -n "$failed" ]; then
  echo "check-mutants: lab(s)$failed let a wrong answer through, or a mutant no longer applies or builds:"
  printf '%s' "$survivors" | grep -v '^$'
  exit 1
fi
echo "check-mutants: every mutant was caught"
