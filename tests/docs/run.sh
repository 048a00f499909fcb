#!/bin/sh
# run.sh -- make docs-check: the pages say what the program says.
#   1. figures: every deterministic figure the pages quote (tests/docs/
#      figures: a command, then the pages' figures from it: fixed-seed
#      sim runs, and the shipped recordings replayed for the threads and
#      frames the guide and recordings/README.md quote) is rerun and must
#      be in the command's output, and still on its page;
#   2. screen words: the Chinese pages name the Chinese screen's words
#      (screen.pl), and the Chinese guide's screen spans exist on that
#      screen (tests/guide/zh-screen.sed);
#   3. terms: the Chinese pages and the program's Chinese strings keep to
#      the glossary (terms.pl);
#   4. parallel pages: each zh page has its English twin's headings and,
#      section by section, as many blocks (parallel.pl);
#   5. bold that CommonMark renders (bold.pl);
#   6. pages as references, not diaries (diary.pl);
#   7. the reference pages that grew into notebooks stay short enough to
#      read: docs/simulator.md under 400 lines, docs/performance.md
#      under 250;
#   8. meaning: no page says again an error of meaning that was fixed,
#      and the bridges a Chinese classroom needs stay (tests/docs/meaning).
# Fast (the simulator is deterministic and quick; the slowest run takes a
# few seconds of CPU), so make check runs it.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
here=$(dirname "$(realpath "$0")")
top=$(realpath "$here/../..")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/../lib.sh"
cd "$top" || exit 1
echo "== tests/docs/run.sh ($BIN)"
command -v perl >/dev/null || { echo "  FAIL: perl is not installed"; exit 1; }

# 1. Figures. Each "$ ARGS" line of the manifest is a threadlab command;
#    the lines under it are "PAGE<tab>FIGURE[<tab>OUTPUT]". FIGURE is
#    found in its page as written; OUTPUT in the output, runs of blanks
#    counted as one; without OUTPUT, FIGURE is, with the spaces between
#    its digit groups taken out ("3 502" is printed 3502).
squeeze() { sed 's/[[:blank:]][[:blank:]]*/ /g'; }
join_groups() { sed -e ':a' -e 's/\([0-9]\) \([0-9][0-9][0-9]\)\([^0-9]\|$\)/\1\2\3/' -e 'ta'; }
n=0
grep '^\$ ' "$here/figures" | {
  while read -r _ args; do
    n=$((n + 1))
    # shellcheck disable=SC2086  # ARGS are words, as a shell would split them
    ( "$BIN" $args >"$tmp/out.$n" 2>&1; echo $? >"$tmp/rc.$n" ) &
    # Two at a time: the machine has two cores, and others use them.
    [ $((n % 2)) = 0 ] && wait
  done
  wait
}
n=0 cmd=""
while IFS= read -r line; do
  case "$line" in
    '#'*|'') continue ;;
    '$ '*) n=$((n + 1)); cmd=${line#\$ }
           [ "$(cat "$tmp/rc.$n" 2>/dev/null)" = 0 ] && ok || bad "'threadlab $cmd' failed"
           squeeze <"$tmp/out.$n" >"$tmp/norm.$n"; continue ;;
  esac
  page=$(printf '%s' "$line" | cut -f1) fig=$(printf '%s' "$line" | cut -f2)
  want=$(printf '%s' "$line" | cut -f3 | squeeze)
  [ -n "$want" ] || want=$(printf '%s\n' "$fig" | join_groups | squeeze | tr -d '`')
  if ! grep -qF -- "$fig" "$page"; then
    bad "$page no longer quotes '$fig' (threadlab $cmd): mend the page or tests/docs/figures"
  elif grep -qF -- "$want" "$tmp/norm.$n"; then
    ok
  else
    bad "$page quotes '$fig', which 'threadlab $cmd' no longer prints"
  fi
done <"$here/figures"

# 2. Screen words.
zh_pages="README.zh.md $(find docs labs -name '*.zh.md' | sort)"
twins=$(find docs labs -name '*.zh.md' | sort)
if perl "$here/screen.pl" viz/msg.c $zh_pages >"$tmp/screen"; then ok
else bad "Chinese pages quote the English screen:"; cat "$tmp/screen"; fi
# Each pair of the guide test's sed: its Chinese side is the screen's.
sed -n 's/^s\/^\([^\\]*\).*/\1/p' tests/guide/zh-screen.sed >"$tmp/zh-words"
while IFS= read -r w; do
  grep -qF -- "\"$w" viz/msg.c viz/reason.c && ok \
    || bad "tests/guide/zh-screen.sed maps '$w', which neither msg.c nor reason.c begins a string with"
done <"$tmp/zh-words"
[ -s "$tmp/zh-words" ] && ok || bad "no pairs read from tests/guide/zh-screen.sed"

# 3. Terms: the pages, and the program's strings a Chinese screen shows
#    (the visualizer's, --help's, the grader's).
program=$(find sim viz load cli models scripts labs -name '*.c' -o -name '*.h' -o -name '*.sh' | sort)
if perl "$here/terms.pl" docs/glossary.md $zh_pages >"$tmp/terms"; then ok
else bad "Chinese pages use terms the glossary does not:"; cat "$tmp/terms"; fi
# shellcheck disable=SC2086  # one path a word
if perl "$here/terms.pl" docs/glossary.md $program >"$tmp/terms"; then ok
else bad "the program's Chinese strings use terms the glossary does not:"; cat "$tmp/terms"; fi

# 4. Parallel pages. The top-level README.zh.md is a short page by design
#    (install, the demo, the course map), not a twin of README.md.
if perl "$here/parallel.pl" $twins >"$tmp/parallel"; then ok
else bad "Chinese pages out of step with their English twins:"; cat "$tmp/parallel"; fi

# 5. Bold.
if perl "$here/bold.pl" $(find . -name '*.md' -not -path './build/*' | sort) >"$tmp/bold"; then ok
else bad "bold that CommonMark does not render:"; cat "$tmp/bold"; fi

# 6. Diaries. History may stay in docs/notes.md; every other page says
#    what is.
diary_pages=$(find docs labs -name '*.md' -not -path docs/notes.md | sort)
# shellcheck disable=SC2086  # one path a word
if perl "$here/diary.pl" $diary_pages README.md README.zh.md recordings/README.md >"$tmp/diary"; then ok
else bad "pages written as a diary:"; cat "$tmp/diary"; fi

# 7. Lengths.
for limit in docs/simulator.md:400 docs/performance.md:250; do
  page=${limit%%:*} max=${limit#*:}
  lines=$(wc -l <"$page")
  if [ "$lines" -lt "$max" ]; then ok
  else bad "$page has $lines lines; it must stay under $max (a reference, not a notebook)"; fi
done

# 8. Meaning. Each page's text with its line breaks and blank runs as
#    one space, so that a rule finds a phrase wrapped over two lines.
grep -v -e '^#' -e '^$' "$here/meaning" >"$tmp/meaning"
while IFS='	' read -r rule page text why; do
  found=no
  tr '\n' ' ' <"$page" | squeeze | grep -qF -- "$text" && found=yes
  case $rule:$found in
    never:no|must:yes) ok ;;
    never:yes) bad "$page says '$text' again: $why" ;;
    must:no) bad "$page no longer says '$text': $why" ;;
    *) bad "tests/docs/meaning: a rule is never or must, not '$rule'" ;;
  esac
done <"$tmp/meaning"     # not a pipe: ok and bad count in this shell

summary docs
