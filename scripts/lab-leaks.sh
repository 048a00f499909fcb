#!/bin/sh
# lab-leaks.sh LAB HANDOUT -- does lab NN's handout (a tree made by `make
# handout`) give the answer away? Prints every place in it, of any file
# type, that holds a line of the lab's reference regions; exits 1 if there
# is one. A line counts when the reference's code has it only inside the
# lab's regions (a "}" or a line the rest of the code also has is no
# answer) and it is 12 characters or more, leading and trailing blanks
# aside. Run it from the reference tree.
set -u
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: lab-leaks.sh LAB HANDOUT}
handout=${2:?usage: lab-leaks.sh LAB HANDOUT}
labdir=$(lab_dir "$lab") || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trim='{ sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); if (length($0) >= 12) print }'
lab_regions "$labdir" | while read -r file fn; do
  region_awk extract "$lab" "$file" "$fn"
done | awk "$trim" >"$tmp/region"
[ -s "$tmp/region" ] || { echo "lab-leaks: lab $lab has no region lines" >&2; exit 2; }
git ls-files -- '*.c' '*.h' ':!labs/*' | xargs cat | awk "$trim" >"$tmp/code"
# The answer's lines: as often in the regions as in all the code.
awk 'FNR == NR { in_region[$0]++; next } { in_code[$0]++ }
     END { for (l in in_region) if (in_code[l] == in_region[l]) print l }' \
  "$tmp/region" "$tmp/code" >"$tmp/answer"
find "$handout" -type f ! -path '*/build/*' -exec awk '
  FNR == 1 && FILENAME == ARGV[1] { }
  FILENAME == answers { want[$0] = 1; next }
  { l = $0; sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l)
    if (l in want) { printf "%s:%d: %s\n", FILENAME, FNR, l; found = 1 } }
  END { exit found ? 1 : 0 }' answers="$tmp/answer" "$tmp/answer" {} + >"$tmp/leaks"
if [ -s "$tmp/leaks" ]; then
  echo "lab $lab: the handout holds $(wc -l <"$tmp/leaks") line(s) of the reference answer:"
  sed "s|^$handout/||" "$tmp/leaks" | head -20
  exit 1
fi
echo "lab $lab: no line of the $(wc -l <"$tmp/answer") answer lines is in the handout"
