#!/bin/sh
# handout.sh LAB DEST -- `make handout LAB=NN DEST=dir`: a copy of this tree
# in which the regions marked for lab NN are replaced by TODO stubs that
# compile. A region in a C file:
#
#   /* LAB 01 BEGIN: what to write, for the student (any number of lines)
#    * STUB: code that stands in for it and compiles (any number of lines)
#    */
#   ... the reference code ...
#   /* LAB 01 END */
#
# becomes
#
#   /* TODO(lab 01): what to write, for the student ... */
#   code that stands in for it
set -eu
lab=${1:?usage: handout.sh LAB DEST}
dest=${2:?usage: handout.sh LAB DEST}
case "$lab" in [0-9][0-9]) ;; *) echo "handout: LAB is two digits, like 03" >&2; exit 2 ;; esac
labdir=$(ls -d labs/"$lab"-* 2>/dev/null | head -1)
[ -n "$labdir" ] || { echo "handout: no lab $lab under labs/" >&2; exit 2; }
[ -e "$dest" ] && [ -n "$(ls -A "$dest" 2>/dev/null)" ] && {
  echo "handout: $dest exists and is not empty" >&2; exit 2; }
mkdir -p "$dest"

# The tracked files (or all, outside git), without build output.
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -co --exclude-standard
else
  find . -type f ! -path './build/*' | sed 's|^\./||'
fi | while read -r f; do
  [ -f "$f" ] || continue
  mkdir -p "$dest/$(dirname "$f")"
  cp -p "$f" "$dest/$f"
done

regions=0
for f in $(grep -rl "LAB $lab BEGIN" models sim 2>/dev/null); do
  awk -v lab="$lab" '
    $0 ~ "/\\* LAB " lab " BEGIN:" {      # the marker: its words become a TODO
      inside = 1; in_head = 1; stub = ""
      indent = $0; sub(/\/\*.*/, "", indent)
      line = $0; sub("LAB " lab " BEGIN:", "TODO(lab " lab "):", line)
      print line
      next
    }
    inside && in_head {
      if ($0 ~ /\*\//) {                  # the end of the marker comment
        in_head = 0
        print indent " */"
        printf "%s", stub
        next
      }
      line = $0; sub(/^ *\* ?/, "", line)
      if (line ~ /^STUB:/) { sub(/^STUB: */, "", line); stub = stub indent line "\n" }
      else print
      next
    }
    $0 ~ "/\\* LAB " lab " END \\*/" { inside = 0; next }
    inside { next }
    { print }
  ' "$f" >"$dest/$f"
  regions=$((regions + $(grep -c "LAB $lab BEGIN" "$f")))
done
echo "handout: lab $lab in $dest ($regions region(s) to write; read $labdir/README.md, or README.zh.md in Chinese)"
