#!/bin/sh
# layers.sh -- the top folders include only downwards (README.md's "Where
# things are"): cli/ may include load/, viz/, sim/ and models/; load/ may
# include viz/ and models/; viz/ and sim/ only models/; models/ none of
# them. Prints each include that runs back up or sideways, as
# FILE:LINE: FOLDER includes FOLDER; exits 1 if there is one.
# With a file argument it reads that file in place of the tree's sources
# (the test feeds it a made-up wrong include).
set -u
rank() {
  case $1 in models) echo 0 ;; sim|viz) echo 1 ;; load) echo 2 ;; cli) echo 3 ;; *) echo -1 ;; esac
}
if [ $# -gt 0 ]; then files="$*"
else cd "$(dirname "$0")/../.." && files=$(find models sim viz load cli -name '*.[ch]' | sort); fi
bad=0
for f in $files; do
  own=${f%%/*}; own_rank=$(rank "$own")
  # #include "TOP/..." where TOP is one of the five folders.
  for hit in $(grep -nE '^#include "(models|sim|viz|load|cli)/' "$f" | sed -E 's/^([0-9]+):#include "([a-z]+)\/.*/\1:\2/'); do
    line=${hit%%:*} top=${hit#*:}
    [ "$top" = "$own" ] && continue
    if [ "$(rank "$top")" -ge "$own_rank" ]; then
      echo "$f:$line: $own/ includes $top/, which is not below it"; bad=1
    fi
  done
done
exit $bad
