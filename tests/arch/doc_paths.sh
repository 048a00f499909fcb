#!/bin/sh
# doc_paths.sh -- every path the docs name exists. Prints each path quoted
# in a Markdown file (README.md, docs/, labs/, ...) that names nothing in
# the tree, as FILE: PATH, and exits 1 if there is one. Run from anywhere;
# it reads the checkout it sits in. Called by tests/arch/run.sh.
#
# What counts as a path: a word starting with one of the tree's top
# folders (models/ sim/ viz/ load/ cli/ tests/ labs/ docs/ bench/ scripts/ recordings/),
# taken up to the first character a path here never has. It may be
# relative to the repository's root or to the Markdown file's own folder
# (a link such as docs/README.md's [models/bio.md](models/bio.md)).
# Placeholders (labs/NN-topic/, check_*.c, models/<model>/, {a,b}) are
# patterns, not paths, and are skipped. A bare source name (`channel.c`)
# must be the name of some file in the tree: a renamed file leaves none
# (a system header in angle brackets, <stdatomic.h>, is not the tree's).
set -u
cd "$(dirname "$0")/../.." || exit 2
export LC_ALL=C            # bytes: a Chinese character ends a path too

TOPS='models|sim|viz|load|cli|tests|labs|docs|bench|scripts|recordings'
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  files() { git ls-files "$@"; }
else                       # a release tarball: every file but the build
  files() { find . -path ./build -prune -o -type f -name "$1" -print | sed 's#^\./##'; }
fi
names=$(mktemp) || exit 2
trap 'rm -f "$names"' EXIT
files '*' | sed 's#.*/##' | sort -u >"$names"

mds=$(files '*.md')
[ -n "$mds" ] || { echo "doc_paths.sh: no Markdown file found"; exit 2; }
missing=0
for md in $mds; do
  dir=$(dirname "$md")
  # -o prints each match with the one character before it (the boundary)
  # and the one after it (to spot a pattern: check_*.c, {bio,pool}).
  for hit in $(grep -oE "(^|[^A-Za-z0-9_./-])($TOPS)/[A-Za-z0-9_./-]*.?" "$md"); do
    path=$(printf '%s' "$hit" | sed -E "s#^[^a-z]*(($TOPS)/)#\\1#")
    case "$path" in
      *[\*\{\<\$%]|*NN*) continue ;;          # a pattern, not a path
    esac
    path=$(printf '%s' "$path" | sed -E 's#[^A-Za-z0-9_/]$##; s#[.:-]+$##')
    [ -e "$path" ] || [ -e "$dir/$path" ] && continue
    echo "$md: $path"
    missing=1
  done
  for hit in $(grep -oE '(^|[^A-Za-z0-9_./-])[A-Za-z0-9_]+\.[ch]([^A-Za-z0-9_]|$)' "$md"); do
    case "$hit" in '<'*) continue ;; esac     # <stdatomic.h>: the system's
    name=$(printf '%s' "$hit" | sed -E 's#^[^A-Za-z0-9_]##; s#[^A-Za-z0-9_]$##')
    grep -qxF "$name" "$names" && continue
    echo "$md: $name (no file of that name)"
    missing=1
  done
done
exit $missing
