#!/bin/sh
# lab-races.sh LAB [RUNS] -- `make lab-races LAB=NN`: prove that lab NN's
# race checks catch a race on every run, not sometimes. Each line of
# labs/NN-topic/races ("TEST-BINARY | MUTANT", the mutant a patch in the
# lab's mutants/) names a Check binary whose case "races" forces a bad
# interleaving through a test seam. The case runs RUNS times (10) on the
# reference, which must pass every time, and RUNS times on the mutant,
# which must fail every time; with HOGS=N (make lab-races sets 2), N CPU
# hogs run beside it all along, as on a busy classroom machine. Prints
# the tally of each; exits 1 unless every run went the right way.
set -u
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: lab-races.sh LAB [RUNS]}
runs=${2:-10}
labdir=$(lab_dir "$lab") || exit 2
[ -f "$labdir/races" ] || { echo "lab $lab: no races file (labs/NN-topic/races)"; exit 2; }
build=${BUILD:-build}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lab-races-$lab.XXXXXX") || exit 2
hogs=""
cleanup() {
  for h in $hogs; do kill "$h" 2>/dev/null; done
  rm -rf "$scratch"
}
trap cleanup EXIT INT TERM
copy_tree "$scratch/tree" '^labs/[^/]+/(ANSWERS[^/]*\.md)$'
[ -d "$build/obj" ] && mkdir -p "$scratch/tree/$build" && cp -a "$build/obj" "$scratch/tree/$build/"

# tally BINARY WANT: how many of RUNS runs of the races case end as WANT
# (pass or fail).
tally() {
  n=0 i=0
  while [ "$i" -lt "$runs" ]; do
    i=$((i + 1))
    if CK_RUN_CASE=races "$1" >"$scratch/run.log" 2>&1 && grep -q '^100%: Checks: [1-9]' "$scratch/run.log"
    then [ "$2" = pass ] && n=$((n + 1))
    else [ "$2" = fail ] && n=$((n + 1)); fi
  done
  echo "$n"
}

i=0
while [ "$i" -lt "${HOGS:-0}" ]; do
  i=$((i + 1))
  yes >/dev/null &
  hogs="$hogs $!"
done
bad=0
grep -v '^#' "$labdir/races" | awk -F'|' 'NF >= 2 { gsub(/ /, "", $1); gsub(/ /, "", $2); print $1, $2 }' >"$scratch/races"
while read -r bin mutant; do
  patchfile=$labdir/mutants/$mutant.patch
  ( cd "$scratch/tree" && make -s "$build/tests/$bin" ) >"$scratch/build.log" 2>&1 ||
    { echo "lab $lab: $bin does not build"; tail -5 "$scratch/build.log"; exit 1; }
  cp "$scratch/tree/$build/tests/$bin" "$scratch/$bin.ref"
  patch -s -p1 -d "$scratch/tree" <"$patchfile" ||
    { echo "lab $lab: mutant $mutant does not apply"; exit 1; }
  ( cd "$scratch/tree" && make -s "$build/tests/$bin" ) >"$scratch/build.log" 2>&1 ||
    { echo "lab $lab: $bin does not build with mutant $mutant"; exit 1; }
  cp "$scratch/tree/$build/tests/$bin" "$scratch/$bin.mut"
  patch -s -R -p1 -d "$scratch/tree" <"$patchfile"
  ref=$(tally "$scratch/$bin.ref" pass)
  mut=$(tally "$scratch/$bin.mut" fail)
  echo "lab $lab: $bin races, beside ${HOGS:-0} CPU hog(s): reference passed $ref of $runs; mutant $mutant failed $mut of $runs"
  [ "$ref" = "$runs" ] && [ "$mut" = "$runs" ] || bad=1
done <"$scratch/races"
[ "$bad" = 0 ]
