#!/bin/sh
# circles.sh -- calls between the files of one folder run one way. For
# each folder of models/ and viz/ it reads the folder's objects (nm: what
# each one calls and does not define, against what each defines), prints
# every call arrow between two of its files, as
#   FOLDER: FILE.c -> FILE.c (function, ...)
# and exits 1 if the arrows of a folder close a circle (a file that, call
# by call, gets back to itself), naming the files on it.
#
#   tests/arch/circles.sh [OBJ_FOLDER...]
#
# Without arguments it reads build/obj/models/*/ and build/obj/viz/ (set
# BUILD for another build folder); with arguments, those folders of
# objects (the test feeds it a made-up circle). A function passed by its
# address counts as a call: the file that names it depends on the file
# that defines it.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -eq 0 ]; then
  obj=${BUILD:-$here/build}/obj
  set -- "$obj"/models/*/ "$obj"/viz/
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for dir in "$@"; do
  dir=${dir%/}
  set -- "$dir"/*.o
  if [ ! -e "$1" ]; then
    echo "circles.sh: no objects in $dir (build first)" >&2
    exit 2
  fi
  folder=${dir#"${BUILD:-$here/build}/obj/"}
  : >"$tmp/defs"; : >"$tmp/uses"
  for o in "$@"; do
    f=$(basename "$o" .o).c
    nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$tmp/defs"
    nm -u "$o" | awk -v f="$f" '{ print $NF, f }' >>"$tmp/uses"
  done
  # Arrows: FROM TO FUNCTION, one line per call across two files.
  awk 'NR == FNR { def[$1] = $2; next }
       ($1 in def) && def[$1] != $2 { print $2, def[$1], $1 }' \
    "$tmp/defs" "$tmp/uses" | sort -u >"$tmp/arrows"
  awk -v d="$folder" '
    { k = $1 " -> " $2
      if (!(k in fns)) { order[++n] = k; fns[k] = $3 } else fns[k] = fns[k] ", " $3 }
    END { for (i = 1; i <= n; i++) printf "%s: %s (%s)\n", d, order[i], fns[order[i]] }' \
    "$tmp/arrows"
  # tsort orders the files by their arrows, or names a circle among them.
  if ! awk '{ print $1, $2 }' "$tmp/arrows" | tsort >/dev/null 2>"$tmp/loop"; then
    echo "$folder: a circle of files:" $(sed -n 's/^tsort: //p' "$tmp/loop" |
                                      grep -v 'input contains a loop' | awk '!seen[$0]++')
    bad=1
  fi
done
exit $bad
