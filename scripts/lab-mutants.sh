#!/bin/sh
# lab-mutants.sh LAB -- prove that lab NN's check catches wrong answers:
# each labs/NN-topic/mutants/NAME.patch (a plausible mistake, against the
# reference) is applied in a scratch copy of this tree, and the lab's
# check must fail on it. Prints which step caught each mutant, names every
# mutant that SURVIVED, and exits 1 if one did, or if a mutant no longer
# applies or no longer compiles (then it proves nothing). Then the
# shortcuts of scripts/lab-shortcuts.sh (exit(0) first in the stubs, a
# forged pass), built and run in a handout: none may earn a point.
set -u
# This script reads the grader's English words: whatever the user's LANG.
export LAB_LANG=en
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: lab-mutants.sh LAB}
labdir=$(lab_dir "$lab") || exit 2
build=${BUILD:-build}
ls "$labdir"/mutants/*.patch >/dev/null 2>&1 || { echo "lab $lab: no mutants"; exit 1; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lab-mutants-$lab.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT INT TERM
copy_tree "$scratch" '^labs/[^/]+/mutants/'
[ -d "$build/obj" ] && mkdir -p "$scratch/$build" && cp -a "$build/obj" "$scratch/$build/"
bad=0 n=0
for m in "$labdir"/mutants/*.patch; do
  name=$(basename "$m" .patch) n=$((n + 1)) began=$(date +%s)
  if ! patch -s -p1 -d "$scratch" <"$m" >"$scratch/patch.log" 2>&1; then
    echo "  mutant $name: DOES NOT APPLY to the reference (update it)"; bad=1; continue
  fi
  # A mutant that hangs a test is caught when Check's hang guard ends it:
  # a quarter of the guard is still many times a right run, and spares
  # minutes a mutant (lab 03's sleeps-with-tasks-queued took 489 s).
  ( cd "$scratch" && LAB_FIRST_FAILURE=1 BUILD=$build \
      CK_TIMEOUT_MULTIPLIER=${MUTANT_TIMEOUT_MULTIPLIER:-0.25} sh scripts/lab-check.sh "$lab" ) \
      >"$scratch/check.log" 2>&1
  st=$?
  if grep -q "build: FAIL" "$scratch/check.log"; then
    echo "  mutant $name: DOES NOT COMPILE (a mutant must build to prove anything)"; bad=1
  elif grep -q "(not graded)" "$scratch/check.log"; then
    echo "  mutant $name: caught before any step ran: not graded (it names what a forged pass needs)"
  elif [ "$st" = 0 ]; then
    echo "  mutant $name: SURVIVED: lab $lab's check passes on this wrong answer"; bad=1
  else
    echo "  mutant $name: caught by $(grep -E '^  step [0-9]+: .*FAIL$' "$scratch/check.log" |
      sed 's/^  step \([0-9]*\):.*/\1/' | tr '\n' ' ' | sed 's/ $//; s/ /, /g; s/^/step(s) /')" \
      "($(($(date +%s) - began)) s)"
  fi
  patch -s -R -p1 -d "$scratch" <"$m" >/dev/null 2>&1 || { echo "  mutant $name: does not revert"; exit 1; }
done
[ "$bad" = 0 ] && echo "lab $lab: all $n mutants caught" || echo "lab $lab: some mutants not caught (above)"

# The shortcuts, made for every region (scripts/lab-shortcuts.sh: exit(0)
# first in a stub, a forged pass), in a fresh handout of the lab, built
# and run with the forgery scan off too: none may earn a point.
hand="$scratch/.handout"
if sh "$LAB_SCRIPTS/handout.sh" "$lab" "$hand" >"$scratch/handout.log" 2>&1; then
  [ -d "$build/obj" ] && mkdir -p "$hand/$build" && cp -a "$build/obj" "$hand/$build/"
  BUILD=$build sh "$LAB_SCRIPTS/lab-shortcuts.sh" "$lab" "$hand" --run >"$scratch/shortcuts.log" 2>&1 || bad=1
  grep -v ': not graded, 0 points$' "$scratch/shortcuts.log"
else
  echo "lab $lab: no handout for the shortcuts:"; tail -3 "$scratch/handout.log"; bad=1
fi
[ "$bad" = 0 ]
