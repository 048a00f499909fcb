#!/bin/sh
# answers.sh LAB DEST -- `make answers LAB=NN DEST=dir`, for teachers: lab
# NN's answers (ANSWERS.md, ANSWERS.zh.md), the reference code of each of
# its regions (reference/FUNCTION.c), and its mutants (the wrong answers
# its check must catch). None of these is in a handout.
set -eu
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: answers.sh LAB DEST}
dest=${2:?usage: answers.sh LAB DEST}
labdir=$(lab_dir "$lab")
[ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ] && {
  echo "answers: $dest exists and is not empty" >&2; exit 2; }
mkdir -p "$dest/reference"
cp -p "$labdir"/ANSWERS*.md "$dest/"
lab_regions "$labdir" | while read -r file fn; do
  { echo "/* $file, $fn(): lab $lab's reference code */"; region_awk extract "$lab" "$file" "$fn"; } \
    >"$dest/reference/$fn.c"
done
[ -d "$labdir/mutants" ] && cp -rp "$labdir/mutants" "$dest/"
echo "answers: lab $lab in $dest (ANSWERS.md, ANSWERS.zh.md, reference/, mutants/)"
