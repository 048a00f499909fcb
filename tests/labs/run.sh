#!/bin/bash
# run.sh -- every lab's check bites: it passes on the reference code, fails
# on the lab's handout (which must still compile) and on every one of the
# lab's mutants (plausible wrong answers, labs/NN-*/mutants/); the handout
# carries no answers (no ANSWERS*.md, no mutants, no line and no body of
# any lab's reference regions: scripts/lab-leaks.sh), which it can only
# because no file holds regions of two labs; and every command a lab's
# README quotes exists (its --help runs), and each README's steps table
# says the steps and points the grader prints, so the labs cannot rot. The
# untouched handout earns no point, and no shortcut (an exit(0) first in a
# stub, a forged pass: scripts/lab-shortcuts.sh) is graded at all. TEST_LAB=NN tests lab NN alone.
# The rolling pool below needs bash's `wait -n`: run by sh, start again in bash.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
# This script reads the grader's English words: whatever the user's LANG.
export LAB_LANG=en
BIN=${THREADLAB_BIN:-build/threadlab}
tmp=$(mktemp -d)
. "$(dirname "$0")/../lib.sh"
trap 'rm -rf "$tmp"' EXIT

# checks_steps LABDIR: "STEP|POINTS|WHAT" per step of the lab's checks, in
# the grader's order, then "total|SUM|".
checks_steps() {
  grep -v '^#' "$1/checks" | awk -F'|' 'NF >= 4 {
    p = $3; gsub(/ /, "", p); w = $4; sub(/^ +/, "", w); sub(/ +$/, "", w)
    print ++n "|" p "|" w; t += p } END { print "total|" t + 0 "|" }'
}

# readme_commands README: the commands a README quotes, one per line:
# each line of its code blocks (comments cut) and each inline `span` that
# names threadlab or make or starts as a subcommand does, blanks squeezed, so that the two languages can
# be compared.
readme_commands() {
  awk '/^ *```/ { block = !block; next }
    block { sub(/[ \t]+#.*/, ""); gsub(/^[ \t]+|[ \t]+$/, ""); gsub(/[ \t]+/, " ")
            if ($0 != "") print "block: " $0; next }
    { text = text " " $0 }
    END { while (match(text, /`[^`]+`/)) {
            s = substr(text, RSTART + 1, RLENGTH - 2); text = substr(text, RSTART + RLENGTH)
            gsub(/[ \t]+/, " ", s); if (s ~ /threadlab|^make |^(load|serve|top|sim|demo|compare|replay) -/) print "inline: " s } }' "$1" | sort -u
}

# readme_steps README: the same, from the steps table under the README's
# "## The check" (or "## 检查") heading; "合计" is the total.
readme_steps() {
  awk -F'|' '/^## (The check|检查)/ { on = 1; next } /^## / { on = 0 }
    on && /^\| *([0-9]+|total|合计) *\|/ {
      s = $2; gsub(/ /, "", s); if (s == "合计") s = "total"
      p = $3; gsub(/[ *]/, "", p); w = $4; sub(/^ +/, "", w); sub(/ +$/, "", w)
      print s "|" p "|" w }' "$1"
}

echo "== tests/labs/run.sh"
# Each file holds the regions of one lab at most: a handout ships every
# other lab's files compiled, without their source (scripts/handout.sh).
shared=$(for d in labs/[0-9][0-9]-*/; do
  n=$(basename "$d" | cut -c1-2)
  grep -v '^#' "$d/regions" | awk -F'|' -v n="$n" 'NF >= 2 { gsub(/ /, "", $1); print $1, n }' | sort -u
done | awk '{ labs[$1] = labs[$1] " " $2; count[$1]++ } END { for (f in count) if (count[f] > 1) print f ":" labs[f] }')
[ -z "$shared" ] && ok || bad "a file holds regions of two labs (a handout would ship one lab's answer with the other): $shared"
# check_lab DIR: every check of one lab; its tally goes to $tmp/tally-NN.
check_lab() {
  dir=$1
  lab=$(basename "$dir" | cut -c1-2)
  for f in README.md README.zh.md ANSWERS.md ANSWERS.zh.md regions; do
    [ -s "$dir/$f" ] && ok || bad "lab $lab has no $f"
  done

  # The reference is graded at all: it calls nothing labs/symbols does not
  # list (a helper the reference gained and the list missed makes the
  # grader refuse every answer, the reference's own too).
  refsyms=$(sh scripts/lab-symbols.sh "$lab" 2>&1)
  [ -z "$refsyms" ] && ok || { bad "lab $lab: the grader would not grade the reference (run scripts/lab-symbols.sh --write):"; echo "$refsyms" | head -3; }
  # The reference passes. make check has just run these very cases with
  # its own Check binaries (a failure there fails make check), so here only
  # their names are checked: a case that no test defines would run nothing
  # and pass. With LAB_MUTANTS=1 the lab's check runs on the reference too.
  if [ "${LAB_MUTANTS:-0}" = 1 ]; then
    if make -s lab-check LAB="$lab" >"$tmp/ref-$lab" 2>&1; then ok
    else bad "lab $lab: the check fails on the reference"; tail -8 "$tmp/ref-$lab"; fi
  else
    grep -v '^#' "$dir/checks" | while IFS='|' read -r bin tcase _; do
      bin=$(echo "$bin" | tr -d ' '); tcase=$(echo "$tcase" | sed 's/^ *//; s/ *$//')
      [ -n "$bin" ] || continue
      # A binary's tests are tests/BIN.c or the files of tests/BIN/.
      grep -qs "tcase_create(\"$tcase\")" "tests/$bin.c" "tests/$bin"/*.c \
          tests/support/*.c tests/support/*/*.c \
        || echo "lab $lab: checks names case '$tcase' of $bin, which no test defines"
    done >"$tmp/names-$lab"
    [ -s "$tmp/names-$lab" ] && { bad "$(cat "$tmp/names-$lab")"; } || ok
  fi

  # Each README states the steps and points the grader prints: the
  # English one in the grader's own words, the Chinese one the points.
  checks_steps "$dir" >"$tmp/steps-$lab"
  readme_steps "$dir/README.md" >"$tmp/readme-$lab"
  cmp -s "$tmp/steps-$lab" "$tmp/readme-$lab" && ok || {
    bad "lab $lab: README.md's steps table is not what its checks grade:"
    diff "$tmp/steps-$lab" "$tmp/readme-$lab" | head -6; }
  readme_steps "$dir/README.zh.md" | cut -d'|' -f1,2 >"$tmp/readme-zh-$lab"
  cut -d'|' -f1,2 "$tmp/steps-$lab" | cmp -s - "$tmp/readme-zh-$lab" && ok || {
    bad "lab $lab: README.zh.md's steps table is not what its checks grade:"
    cut -d'|' -f1,2 "$tmp/steps-$lab" | diff - "$tmp/readme-zh-$lab" | head -6; }

  # Each README says how much the student writes, as scripts/lab-size.sh
  # counts it now ("N functions, about M lines": M within a fifth, or 3).
  size=$(sh scripts/lab-size.sh "$lab" | tail -1)
  for readme in README.md README.zh.md; do
    said=$(sed -n 's/.*\*\*What you will write\.\*\* \([0-9]*\) functions*, about \([0-9]*\) lines*.*/\1 \2/p
                   s/.*\*\*你要写的\*\*：\([0-9]*\) 个函数，约 \([0-9]*\) 行.*/\1 \2/p' "$dir/$readme" | head -1)
    echo "$size $said" | awk '{ tol = $3 / 5 < 3 ? 3 : $3 / 5; d = $6 - $3
      exit !(NF == 6 && $5 == $1 && d <= tol && -d <= tol) }' && ok ||
      bad "lab $lab: $readme says '${said:-nothing}' of what you will write (functions, lines); lab-size.sh counts: $size"
  done

  # The handout compiles, and fails the check. (Its failures come fast:
  # Check's timeouts are cut, as the stubs make some tests wait.)
  make -s handout LAB="$lab" DEST="$tmp/h$lab" >/dev/null 2>&1 || bad "lab $lab: no handout"
  # The reference's objects, times kept, but not those of the stubbed
  # files: only they compile. (Kept, one could be newer than its stub: a
  # handout made alongside may have just rebuilt it in this tree.)
  [ -d build/obj ] && mkdir -p "$tmp/h$lab/build" && cp -a build/obj "$tmp/h$lab/build/"
  for f in $(grep -v '^#' "$dir/regions" | awk -F'|' 'NF >= 2 { gsub(/ /, "", $1); print $1 }'); do rm -f "$tmp/h$lab/build/obj/${f%.c}.o"; done
  [ "$(grep -rl "TODO(lab $lab)" "$tmp/h$lab/models" "$tmp/h$lab/sim" 2>/dev/null | wc -l)" -ge 1 ] && ok \
    || bad "lab $lab: the handout has no TODO"
  leaked=$(find "$tmp/h$lab" -name 'ANSWERS*' -o -type d -name mutants | head -3)
  [ -z "$leaked" ] && ok || bad "lab $lab: the handout ships answers: $leaked"
  if scripts/lab-leaks.sh "$lab" "$tmp/h$lab" >"$tmp/leaks-$lab" 2>&1; then ok
  else bad "lab $lab: the handout holds the reference code"; head -5 "$tmp/leaks-$lab"; fi
  ( cd "$tmp/h$lab" && CK_TIMEOUT_MULTIPLIER=0.1 make -s -j2 lab-check LAB="$lab" ) \
      >"$tmp/hand-$lab" 2>&1
  st=$?
  if grep -q "build: FAIL" "$tmp/hand-$lab"; then
    bad "lab $lab: the handout does not compile"; tail -8 "$tmp/hand-$lab"
  elif [ "$st" = 0 ]; then
    bad "lab $lab: the check passes on the handout: it does not bite"
  elif grep -q ": FAIL" "$tmp/hand-$lab"; then ok
  else bad "lab $lab: the handout's check failed without saying which step"; tail -5 "$tmp/hand-$lab"; fi
  # No free points: the untouched handout earns none, so every step that
  # gives points fails on it (a 0-point guard may pass).
  free=$(grep -E '^  step [0-9]+: +[1-9][0-9]*/' "$tmp/hand-$lab" | head -3)
  [ -z "$free" ] && ok || bad "lab $lab: the untouched handout earns points: $free"

  # The shortcuts (scripts/lab-shortcuts.sh): exit(0) first in each stub,
  # and a forged pass in each region and each file, are not graded at all
  # (the forgery scan), and the reference trips no part of that scan.
  # make check-mutants builds and runs them too, with the scan off.
  if sh scripts/lab-shortcuts.sh "$lab" "$tmp/h$lab" >"$tmp/short-$lab" 2>&1; then ok
  else bad "lab $lab: a shortcut is graded or earns points:"
    grep -Ev ': not graded, 0 points$' "$tmp/short-$lab" | head -6; fi

  # Every mutant fails the check; the ones that survive are named. (A few
  # minutes of wall time on a busy machine: `make check-mutants` runs it,
  # from .ci/run, with LAB_MUTANTS=1.)
  if [ "${LAB_MUTANTS:-0}" = 1 ] && [ -d "$dir/mutants" ]; then
    if make -s lab-mutants LAB="$lab" >"$tmp/mut-$lab" 2>&1; then ok
    else bad "lab $lab: its check misses wrong answers:"; grep -v ': caught by' "$tmp/mut-$lab" | head -8; fi
  fi

  # Both READMEs quote the same commands, each as the student types it
  # (build/threadlab, where make puts it).
  readme_commands "$dir/README.md" >"$tmp/cmd-en-$lab"
  readme_commands "$dir/README.zh.md" >"$tmp/cmd-zh-$lab"
  cmp -s "$tmp/cmd-en-$lab" "$tmp/cmd-zh-$lab" && ok || {
    bad "lab $lab: README.md and README.zh.md quote different commands (<: English only, >: Chinese only):"
    diff "$tmp/cmd-en-$lab" "$tmp/cmd-zh-$lab" | grep '^[<>]' | head -6; }
  bare=$(grep -hE '^(block|inline): (threadlab|load|serve|top|sim|demo|compare|replay) ' \
           "$tmp/cmd-en-$lab" "$tmp/cmd-zh-$lab" | head -1)
  [ -z "$bare" ] && ok || bad "lab $lab: a command without build/: $bare"

  # Every threadlab command the READMEs quote exists.
  for cmd in $(cat "$dir/README.md" "$dir/README.zh.md" | grep -o 'threadlab [a-z][a-z]*' |
               awk '{ print $2 }' | sort -u); do
    "$BIN" "$cmd" --help >/dev/null 2>&1 && ok || bad "lab $lab quotes 'threadlab $cmd', which has no --help"
  done
  for target in $(grep -E '^ *make [a-z]' "$dir/README.md" | awk '{ print $2 }' | sort -u); do
    make -n "$target" LAB="$lab" DEST="$tmp/x" >/dev/null 2>&1 && ok || bad "lab $lab quotes 'make $target'"
  done
  echo "$pass $fail" >"$tmp/tally-$lab"
}

# Four labs at a time, a new one as soon as one ends: a handout's check
# mostly waits (its stubs never answer, and each case runs out its
# timeout), so one after another would be minutes of sleeping. Each lab's
# output is shown at the end, in lab order.
labs=$(for d in labs/${TEST_LAB:-[0-9][0-9]}-*/; do [ -f "$d/checks" ] && echo "$d"; done)
running=0
for d in $labs; do
  lab=$(basename "$d" | cut -c1-2)
  ( pass=0 fail=0; check_lab "$d" ) >"$tmp/out-$lab" 2>&1 &
  running=$((running + 1))
  if [ "$running" -ge 4 ]; then wait -n; running=$((running - 1)); fi
done
wait
for d in $labs; do
  lab=$(basename "$d" | cut -c1-2)
  cat "$tmp/out-$lab"
  if read -r p f <"$tmp/tally-$lab"; then pass=$((pass + p)) fail=$((fail + f))
  else bad "lab $lab: its checks ended before their tally"; fi
done
summary labs
