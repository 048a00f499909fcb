#!/bin/sh
# lab-shortcuts.sh LAB HANDOUT [--run] -- the shortcuts a student might
# take instead of doing lab NN, made for every one of its regions: none may
# earn a point. HANDOUT is the lab's handout (`make handout`); each
# shortcut is cut into it from this tree's reference files and the lab's
# stubs, graded there by its scripts/lab-check.sh, and taken out again.
#
#   exit-first   (each region)  its stub begins with exit(0): Check's fork
#                               mode counts a test whose process exits 0
#                               as passed
#   forge-here   (each region)  its stub begins by writing Check's XML log
#                               itself, printing Check's "100%" line and
#                               leaving (_exit)
#   forge-early  (each file)    a constructor does the same before main
#
# Each must come out "not graded" (lab-lib.sh's FORGERY_RE), 0 points,
# before anything is built. With --run (make check-mutants: it builds and
# runs the steps), the run-time checks are proved too, the scan off
# (LAB_NO_SCAN=1): exit(0) first in every stub at once, and a constructor
# that prints Check's "100%" line and leaves, must each earn 0 points. (A
# constructor that writes Check's whole log leaves nothing a run can tell
# from a pass: the scan alone stops that one.) Prints one line per
# shortcut; exit 1, naming it, if one earns a point. LAB_SHORTCUTS_KEEP=
# PREFIX keeps the grader's output for shortcut N as PREFIX.N.
set -u
# This script reads the grader's English words: whatever the user's LANG.
export LAB_LANG=en
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: lab-shortcuts.sh LAB HANDOUT [--run]}
hand=${2:?usage: lab-shortcuts.sh LAB HANDOUT [--run]}
run=0
[ "${3:-}" = "--run" ] && run=1
labdir=$(lab_dir "$lab") || exit 2
[ -f "$hand/HANDOUT" ] || { echo "lab-shortcuts: $hand is not a handout (make handout LAB=$lab)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lab-shortcuts-$lab.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
regions=$(lab_regions "$labdir")
files=$(echo "$regions" | awk '{ print $1 }' | sort -u)
for f in $files; do
  mkdir -p "$tmp/orig/$(dirname "$f")" && cp -p "$hand/$f" "$tmp/orig/$f"
done

# The shortcuts' C, each put first in a stub (or, forge-early, at the end
# of a file, inside a constructor).
echo 'exit(0);' >"$tmp/exit.c"
cat >"$tmp/forge.c" <<'EOF'
{
    const char *xml = getenv("CK_XML_LOG_FILE_NAME");
    FILE *log = xml ? fopen(xml, "w") : NULL;
    if (log) {
        fputs("<?xml version=\"1.0\"?>\n<testsuites><suite><title>forged</title>"
              "<test result=\"success\"><fn>t.c:1</fn><id>forged</id><iteration>0</iteration>"
              "<duration>0.010000</duration><description>forged</description>"
              "<message>Passed</message></test></suite><duration>0.010000</duration>"
              "</testsuites>\n", log);
        fclose(log);
    }
    printf("100%%: Checks: 3, Failures: 0, Errors: 0\n");
    fflush(stdout);
    _exit(0);
}
EOF
cat >"$tmp/print.c" <<'EOF'
{
    printf("100%%: Checks: 3, Failures: 0, Errors: 0\n");
    fflush(stdout);
    _exit(0);
}
EOF

# with_shortcut STUB C: the stub, with the lines of C first in it: after
# a function stub's "{", or (a fragment) above its first line, indented
# as that line.
with_shortcut() {
  awk -v c="$2" '
    BEGIN { while ((getline l < c) > 0) body[++n] = l }
    function put(indent,   i) { for (i = 1; i <= n; i++) print indent body[i] }
    NR == 1 && /^ / { match($0, /^ */); put(substr($0, 1, RLENGTH)); done = 1 }
    { print }
    !done && $0 == "{" { put("    "); done = 1 }' "$1"
}

# cut FILE FN C: the handout's FILE made again from the reference, every
# region stubbed, FN's stub (every one, for "*") with C first in it.
cut() {
  cp "$1" "$tmp/cur.c"
  echo "$regions" | while read -r f r; do
    [ "$f" = "$1" ] || continue
    stub="$labdir/stubs/$r.c"
    if [ "$2" = "*" ] || [ "$2" = "$r" ]; then
      with_shortcut "$stub" "$3" >"$tmp/stub.c"
      stub="$tmp/stub.c"
    fi
    region_awk apply "$lab" "$tmp/cur.c" "$r" "$stub" >"$tmp/next.c" || exit 3
    mv "$tmp/next.c" "$tmp/cur.c"
  done || return 3
  { printf '#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n'; cat "$tmp/cur.c"; } \
    >"$hand/$1"
}

# forge_early FILE C: FILE as handed out, with a constructor that runs C.
forge_early() {
  { printf '#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n'
    cat "$tmp/orig/$1"
    echo '__attribute__((constructor)) static void lab_shortcut(void)'
    cat "$2"; } >"$hand/$1"
}

restore() {
  # A new time, not the old one: make must build the restored file again.
  for f in $files; do cp "$tmp/orig/$f" "$hand/$f"; done
}

# grade NAME STATIC(1|0): grade the handout as it is now; the shortcut
# must earn nothing (and, static, not be graded at all).
bad=0 n=0
grade() {
  n=$((n + 1))
  ( cd "$hand" && LAB_NO_SCAN=$((1 - $2)) CK_TIMEOUT_MULTIPLIER=0.1 BUILD=${BUILD:-build} \
      sh scripts/lab-check.sh "$lab" ) >"$tmp/check.log" 2>&1
  earned=$(grep -E '^  step [0-9]+: +[1-9][0-9]*/' "$tmp/check.log" | head -3)
  if [ "$2" = 1 ] && ! grep -q "(not graded)" "$tmp/check.log"; then
    echo "  shortcut $1: GRADED: the scan did not refuse it"; bad=1
    sed 's/^/    /' "$tmp/check.log" | tail -4
  elif grep -q "build: FAIL" "$tmp/check.log"; then
    echo "  shortcut $1: DOES NOT COMPILE (so it proves nothing)"; bad=1
    grep -E 'error' "$tmp/check.log" | head -3 | sed 's/^/    /'
  elif [ -n "$earned" ]; then
    echo "  shortcut $1: EARNED POINTS:"; echo "$earned" | sed 's/^/    /'; bad=1
  elif [ "$2" = 1 ]; then
    echo "  shortcut $1: not graded, 0 points"
  else
    echo "  shortcut $1: 0 points ($(grep -E '^lab [0-9]+: ' "$tmp/check.log" | tail -1 | sed 's/^lab [0-9]*: //'))"
  fi
  [ -n "${LAB_SHORTCUTS_KEEP:-}" ] && cp "$tmp/check.log" "$LAB_SHORTCUTS_KEEP.$n"
  restore
}

# The reference itself must be graded: none of its region files may name
# what the scan refuses.
forged=$(forgery_lines "$labdir")
if [ -n "$forged" ]; then
  echo "  lab $lab: the reference trips the forgery scan, so no answer could be graded:"
  printf '%s\n' "$forged" | head -5 | sed 's/^/    /'
  bad=1
fi
echo "$regions" >"$tmp/regions"
while read -r file fn; do
  cut "$file" "$fn" "$tmp/exit.c" || { echo "  lab $lab: region $fn no longer fits its stub"; exit 3; }
  grade "exit-first $fn" 1
  cut "$file" "$fn" "$tmp/forge.c" || exit 3
  grade "forge-here $fn" 1
done <"$tmp/regions"
for f in $files; do
  forge_early "$f" "$tmp/forge.c"
  grade "forge-early $(basename "$f")" 1
done
if [ "$run" = 1 ]; then
  for f in $files; do cut "$f" "*" "$tmp/exit.c" || exit 3; done
  grade "exit-first in every stub, the scan off" 0
  set -- $files
  forge_early "$1" "$tmp/print.c"
  grade "forge-early $(basename "$1") printing Check's 100% line, the scan off" 0
fi
[ "$bad" = 0 ] && echo "lab $lab: all $n shortcuts earn no point" ||
  echo "lab $lab: a shortcut earned points or was graded (above)"
[ "$bad" = 0 ]
