#!/bin/sh
# lab-size.sh LAB -- how much code lab NN asks a student to write: its
# regions (labs/NN-topic/regions), and in each the reference's lines of C,
# blank and comment lines not counted (a line that only opens or closes a
# brace counts: the student types it too). Prints one line per region,
# then "N functions, M lines"; each README states that figure ("what you
# will write"), and tests/labs/run.sh checks it still does.
set -u
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: lab-size.sh LAB}
labdir=$(lab_dir "$lab") || exit 2
# In a handout the regions are the stubs: their size says nothing.
[ -f HANDOUT ] && { echo "lab-size: this tree is a handout: its regions are the stubs" >&2; exit 2; }
n=0 total=0
while read -r file fn; do
  [ -n "$fn" ] || continue
  lines=$(region_awk extract "$lab" "$file" "$fn" | grep -Ev '^[[:space:]]*($|/\*|\*)' | wc -l)
  echo "$file $fn: $lines lines"
  n=$((n + 1)) total=$((total + lines))
done <<EOF
$(lab_regions "$labdir")
EOF
echo "$n functions, $total lines"
