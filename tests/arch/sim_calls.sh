#!/bin/sh
# sim_calls.sh [OBJ...] -- which simulator file calls which (nm over the
# objects of sim/*.c, by default those under build/obj/sim): for each
# object, the symbols it uses (nm -u) that another object of the set
# defines (nm --defined-only). Prints one arrow per pair of files,
# "FROM.c -> TO.c: SYMBOL ...", and exits 1 when the arrows close a
# circle (a file that, through others, calls itself), naming its files.
# The models plug into the engine through their table of operations
# (sim_internal.h, struct sim_model_ops), so calls run only one way.
set -u
if [ $# -eq 0 ]; then
  dir=${SIM_OBJ_DIR:-$(dirname "$0")/../../build/obj/sim}
  set -- "$dir"/*.o
fi
[ -e "$1" ] || { echo "sim_calls.sh: no objects ($1): build first" >&2; exit 2; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
for o in "$@"; do
  f=$(basename "$o" .o).c
  nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print $3, f }'
done | sort >"$tmp/defined"                 # SYMBOL FILE
for o in "$@"; do
  f=$(basename "$o" .o).c
  nm -u "$o" | awk -v f="$f" '{ print $NF, f }'
done | sort >"$tmp/used"                    # SYMBOL FILE
# SYMBOL FROM TO, then one line per FROM -> TO with its symbols.
join "$tmp/used" "$tmp/defined" | awk '$2 != $3 { print $2, $3, $1 }' | sort |
  awk '{ k = $1 " -> " $2; if (k != last) { if (last != "") print line; line = k ":"; last = k }
         line = line " " $3 } END { if (last != "") print line }' >"$tmp/arrows"
cat "$tmp/arrows"
# tsort lists the files of a circle on stderr and fails.
if ! sed 's/:.*//; s/ -> / /' "$tmp/arrows" | tsort >/dev/null 2>"$tmp/loop"; then
  echo "a circle of calls among these files:" \
       $(sed -n 's/^tsort: //p' "$tmp/loop" | grep -v 'input contains a loop' | sort -u)
  exit 1
fi
exit 0
