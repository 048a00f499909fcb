#!/bin/sh
# lab-leaks.sh LAB HANDOUT -- does lab NN's handout (a tree made by `make
# handout`) give an answer away, of this lab or of any other? A class does
# the labs in order, so lab 05's handout must not hold lab 03's answer
# either. Prints every place in it, of any file type, that holds
#   - a region's whole reference body, blanks taken out (so re-indenting
#     or re-wrapping it hides nothing), or
#   - a line of a region: a line that the reference's code has only inside
#     the labs' regions (a "}" or a line the rest of the code also has is
#     no answer), 12 characters or more, leading and trailing blanks aside;
# and exits 1 if there is one. Run it from the reference tree.
set -u
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: lab-leaks.sh LAB HANDOUT}
handout=${2:?usage: lab-leaks.sh LAB HANDOUT}
lab_dir "$lab" >/dev/null || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
trim='{ sub(/^[ \t]+/, ""); sub(/[ \t]+$/, ""); if (length($0) >= 12) print }'
for d in labs/[0-9][0-9]-*/; do
  each=$(basename "$d" | cut -c1-2)
  lab_regions "$d" | while read -r file fn; do
    region_awk extract "$each" "$file" "$fn" >"$tmp/text"
    awk "$trim" "$tmp/text" >>"$tmp/region"
    # The region's body, blanks out: after its signature's "{" (a whole
    # function), or all of it (a region from a marker).
    awk 'seen { body = body $0 "\n" } !seen { all = all $0 "\n" } $0 == "{" { seen = 1 }
      END { printf "%s", seen ? body : all }' "$tmp/text" | tr -d ' \t\n' >"$tmp/body.$each.$fn"
  done
done
[ -s "$tmp/region" ] || { echo "lab-leaks: the labs have no region lines" >&2; exit 2; }
git ls-files -co --exclude-standard -- '*.c' '*.h' ':!labs/*' | xargs cat | awk "$trim" >"$tmp/code"
# The answers' lines: as often in the regions as in all the code.
awk 'FNR == NR { in_region[$0]++; next } { in_code[$0]++ }
     END { for (l in in_region) if (in_code[l] == in_region[l]) print l }' \
  "$tmp/region" "$tmp/code" >"$tmp/answer"
find "$handout" -type f ! -path '*/build/*' ! -name '*.o' -exec awk '
  FILENAME == answers { want[$0] = 1; next }
  { l = $0; sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l)
    if (l in want) { printf "%s:%d: %s\n", FILENAME, FNR, l; found = 1 } }
  END { exit found ? 1 : 0 }' answers="$tmp/answer" "$tmp/answer" {} + >"$tmp/leaks"
# The bodies (one of a few characters, like "return 0;", names nothing).
for b in "$tmp"/body.*; do
  [ "$(wc -c <"$b")" -ge 40 ] || continue
  find "$handout" -type f ! -path '*/build/*' ! -name '*.o' -exec perl -e '
    my ($bodyfile, $name, @files) = @ARGV;
    local $/; open my $f, "<", $bodyfile or die "$bodyfile: $!"; my $body = <$f>;
    for my $file (@files) {
      open my $h, "<", $file or next; (my $all = <$h>) =~ s/[ \t\n]//g;
      print "$file: the whole reference body of lab $name\n" if index($all, $body) >= 0;
    }' "$b" "$(echo "${b##*/body.}" | sed 's/\./ region /')" {} +
done >>"$tmp/leaks"
if [ -s "$tmp/leaks" ]; then
  echo "lab $lab: the handout holds $(wc -l <"$tmp/leaks") line(s) or body(ies) of the reference answers:"
  sed "s|^$handout/||" "$tmp/leaks" | head -20
  exit 1
fi
echo "lab $lab: no line of the $(wc -l <"$tmp/answer") answer lines, and no region's body, is in the handout"
