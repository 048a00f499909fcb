#!/bin/sh
# handout.sh LAB DEST -- `make handout LAB=NN DEST=dir`: a student's copy of
# this tree, in which lab NN's regions (labs/NN-topic/regions: functions,
# or the rest of a block after a "lab NN region" marker) are replaced by
# the stubs in labs/NN-topic/stubs/: a TODO that states the contract, and
# code that compiles. The handout holds no answers: no ANSWERS*.md and no
# mutants/ of any lab (a mutant patch quotes the reference code).
set -eu
. "$(dirname "$0")/lab-lib.sh"
lab=${1:?usage: handout.sh LAB DEST}
dest=${2:?usage: handout.sh LAB DEST}
labdir=$(lab_dir "$lab")
[ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ] && {
  echo "handout: $dest exists and is not empty" >&2; exit 2; }
mkdir -p "$dest"
copy_tree "$dest" '^labs/[^/]+/(ANSWERS[^/]*\.md|mutants/)'
put_stubs "$lab" "$labdir" "$dest" || { echo "handout: lab $lab's stubs do not fit the code (see above)" >&2; exit 3; }
n=$(lab_regions "$labdir" | wc -l)
echo "handout: lab $lab in $dest ($n region(s) to write, each marked TODO(lab $lab));"
echo "  read $labdir/README.md (English) or $labdir/README.zh.md (中文), and its HINTS.md (HINTS.zh.md) when you want help"
