#!/bin/sh
# thread_contracts.sh [FILE.h...] -- every function a header declares
# says which thread may call it ("Any thread.", "Loop thread only.", as
# the style guide asks and muduo does). Prints each prototype without one
# as FILE:LINE NAME and exits 1 if there is one. Without arguments it
# reads every header under models/. Called by tests/arch/run.sh.
#
# Where the contract may stand, nearest first:
#   - in the prototype's own lines (a trailing comment), or in the comment
#     just above it: the lines above up to the first blank one, so that
#     one comment may speak for a group of prototypes declared together;
#   - in the section heading it sits under (/* ---- fds (loop thread
#     only) ---- */);
#   - in a file-wide rule in the header's opening comment, a sentence
#     "Every function ... any thread" (or "... the loop's thread").
# A contract names a thread: "any thread", "loop thread", "the calling
# thread", "its own thread", "not the loop's thread", "the watchdog
# thread", "thread only", or says the function is pure (no thread
# matters). A comment that merely mentions threads does not count.
set -u
cd "$(dirname "$0")/../.." || exit 2
[ $# -eq 0 ] && set -- $(find models -name '*.h' | sort)

out=$(awk -v q="'" '
  function flat(text) {                  # a comment broken over lines reads on
    text = tolower(text)
    gsub(/[\/*]+/, " ", text)
    gsub(/[[:space:]]+/, " ", text)
    return text
  }
  function contract(text) {
    text = flat(text) " "
    # "thread" as a word: "its threads belong to the pool" is no contract.
    return text ~ /(any|loop|calling|this|own|its|one|same|main|boss|worker|acceptor|watchdog|task|submitting|business|checker) thread[^a-z]/ ||
           text ~ /the [a-z-]+ thread[^a-z]/ ||
           text ~ ("[a-z]+" q "s thread[^a-z]") ||
           text ~ /threads? only/ || text ~ /(^| )pure[^a-z]/
  }
  function report(name) {
    checked++
    if (!contract(proto) && !contract(above) && !contract(heading) && !filewide)
      printf "%s:%d %s\n", FILENAME, pline, name
  }
  FNR == 1 { above = ""; heading = ""; rule = ""; filewide = 0; opening = 1
             depth = 0; inproto = 0; inheading = 0 }
  opening {                              # the opening comment: a file-wide rule?
    rule = rule " " $0
    if ($0 ~ /\*\//) {
      opening = 0
      filewide = flat(rule) ~ /every function[^.]*(any|one|the [^.]*) thread/
    }
    next
  }
  /^[[:space:]]*$/ { above = ""; next }
  /^\/\* ----/ { heading = $0; inheading = ($0 !~ /\*\//); above = ""; next }
  inheading { heading = heading " " $0; inheading = ($0 !~ /\*\//); next }
  /^#/ { next }
  {
    line = $0
    # An inline function: its contract is checked where its body opens.
    if (inproto && line ~ /\{/) { inproto = 0; report(pname) }
    # Struct, union and enum bodies hold fields, not prototypes.
    opens = gsub(/\{/, "{", line); closes = gsub(/\}/, "}", line)
    if (depth > 0 || opens > 0) { depth += opens - closes; above = above " " line; next }
    if (inproto) {
      proto = proto " " line
      if (line ~ /;/) { inproto = 0; report(pname) }
    } else if (line ~ /^[A-Za-z_]/ && line ~ /\(/ && line !~ /^typedef/) {
      proto = line; pline = FNR
      pname = line; sub(/[[:space:]]*\(.*/, "", pname); sub(/.*[^A-Za-z0-9_]/, "", pname)
      if (line ~ /;/) report(pname); else inproto = 1
    }
    above = above " " line
  }
  END { print "#checked " checked + 0 }
' "$@") || { echo "thread_contracts.sh: awk failed"; exit 2; }
# A check that read no prototype (a broken pattern, no headers) proves
# nothing: it fails.
case "$out" in
  *"#checked 0"*) echo "thread_contracts.sh: no prototype found in $*"; exit 2 ;;
esac
out=$(echo "$out" | grep -v '^#checked' | sort -u)
[ -z "$out" ] && exit 0
echo "$out"
exit 1
