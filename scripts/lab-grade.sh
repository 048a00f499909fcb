#!/bin/sh
# lab-grade.sh [--json] LAB DIR -- `make lab-grade LAB=NN DIR=path`: grade a
# student's tree. From DIR only the files that hold lab NN's regions
# (labs/NN-topic/regions) are taken; they are built with this tree's
# everything else, tests included (so a test edited in DIR changes
# nothing; a test file is taken only when it holds a region, as lab 06's
# proof, tests/support/affinity_proof.c), in a scratch copy that is
# removed afterwards. Neither this tree nor DIR is written to. Prints
# what `make lab-check` prints; the files taken are scanned for a forged
# pass first (lab-check.sh).
set -u
. "$(dirname "$0")/lab-lib.sh"
opt=""
[ "${1:-}" = "--json" ] && { opt=--json; shift; }
lab=${1:?usage: lab-grade.sh [--json] LAB DIR}
dir=${2:?usage: lab-grade.sh [--json] LAB DIR}
labdir=$(lab_dir "$lab") || exit 2
[ -d "$dir" ] || { echo "lab-grade: $dir is not a directory" >&2; exit 2; }
build=${BUILD:-build}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/lab-grade-$lab.XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT INT TERM
copy_tree "$scratch"
# This tree's objects, times kept, so only the student's files compile.
[ -d "$build/obj" ] && mkdir -p "$scratch/$build" && cp -a "$build/obj" "$scratch/$build/"
for file in $(lab_regions "$labdir" | awk '{ print $1 }' | sort -u); do
  [ -f "$dir/$file" ] || { echo "lab-grade: $dir has no $file (lab $lab's code is in it)" >&2; exit 2; }
  cp "$dir/$file" "$scratch/$file"
done
cd "$scratch" && BUILD=$build sh scripts/lab-check.sh $opt "$lab"
