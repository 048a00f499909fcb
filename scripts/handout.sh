#!/bin/sh
# handout.sh LAB DEST -- `make handout LAB=NN DEST=dir`: a student's copy of
# this tree, in which lab NN's regions (labs/NN-topic/regions: functions,
# or the rest of a block after a "lab NN region" marker) are replaced by
# the stubs in labs/NN-topic/stubs/: a TODO that states the contract, and
# code that compiles. The handout holds no answers: no ANSWERS*.md and no
# mutants/ of any lab (a mutant patch quotes the reference code), and no
# source of another lab's regions: each file that holds one ships as an
# object in labs/prebuilt/ (put_prebuilt), which the build links instead.
set -eu
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: handout.sh LAB DEST}
dest=${2:?usage: handout.sh LAB DEST}
labdir=$(lab_dir "$lab")
# A handout's regions are stubs already: a handout made from one would have
# nothing to cut. Say where the student is instead.
if [ -f HANDOUT ]; then
  echo "handout: this tree is already a handout ($(head -1 HANDOUT)): work in it," >&2
  echo "  from its top folder: make lab-check LAB=$lab" >&2
  exit 2
fi
[ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ] && {
  echo "handout: $dest exists and is not empty" >&2; exit 2; }
mkdir -p "$dest"
copy_tree "$dest" '^labs/[^/]+/(ANSWERS[^/]*\.md|mutants/)'
put_stubs "$lab" "$labdir" "$dest" || { echo "handout: lab $lab's stubs do not fit the code (see above)" >&2; exit 3; }
put_prebuilt "$lab" "$dest" || { echo "handout: the other labs' files do not compile (see above)" >&2; exit 3; }
printf 'lab %s handout: write the TODO(lab %s) regions, then make lab-check LAB=%s\n' \
  "$lab" "$lab" "$lab" >"$dest/HANDOUT"
n=$(lab_regions "$labdir" | wc -l)
echo "handout: lab $lab in $dest ($n region(s) to write, each marked TODO(lab $lab));"
echo "  read $labdir/README.md (English) or $labdir/README.zh.md (中文), and its HINTS.md (HINTS.zh.md) when you want help"
