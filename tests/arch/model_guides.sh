#!/bin/sh
# model_guides.sh -- each model's main file names its mechanism, truly.
# The opening comment of models/bio/bio.c, models/pool/poolserver.c,
# models/reactor/reactor.c and models/multireactor/multireactor.c ends with
# a list a student reads first:
#
#    * Where it lives, and what to read first:
#    *   on_accept (here)            a thread per accepted connection
#    *   conn_serve (models/blocking/conn.c)  read -> answer -> write
#
# Each entry is a function and the file that defines it ("here": this
# file). Prints each missing list, and each entry whose function is not
# defined in the file it names (a function renamed or moved leaves the
# guide pointing at nothing), and exits 1 if there is one. Called by
# tests/arch/run.sh.
set -u
cd "$(dirname "$0")/../.." || exit 2
[ $# -eq 0 ] && set -- models/bio/bio.c models/pool/poolserver.c \
  models/reactor/reactor.c models/multireactor/multireactor.c

wrong=0
for main in "$@"; do
  # The entries: the lines after the heading, up to the comment's end.
  entries=$(awk '/\*\// { exit } found && /^ \*   [a-z_]+ \(/ { print $2, $3 }
                 /Where it lives, and what to read first:/ { found = 1 }' "$main")
  if [ -z "$entries" ]; then
    echo "$main: no \"Where it lives, and what to read first:\" list in its opening comment"
    wrong=1
    continue
  fi
  while read -r name file; do
    file=${file#(}; file=${file%)}
    [ "$file" = here ] && file=$main
    if [ ! -f "$file" ]; then
      echo "$main: $name: no file $file"
      wrong=1
    # A definition: the name's signature in column 0, not ending in ';'.
    elif ! grep -E "(^|[^a-z_])$name\(" "$file" | grep -E '^[a-z]' | grep -qv ';[[:space:]]*$'; then
      echo "$main: $name is not defined in $file"
      wrong=1
    fi
  done <<EOF
$entries
EOF
done
exit $wrong
