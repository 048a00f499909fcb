#!/bin/sh
# function_lengths.sh [FILE.c...] -- no function is over 80 lines unless
# it says why. The style guide asks a function to fit on a screen, and
# lets one "heart" per model run longer (the loop iteration, the
# watchdog's cycle, the BIO connection thread) only as a list of named
# steps. A function over the limit passes when the comment just above it
# (no blank line between) gives its reason as "Long function: WHY" (a
# --help text printed in one piece, a table). Prints each other function
# over the limit as FILE:LINE NAME: N lines and exits 1 if there is one.
# Without arguments it measures every .c file in the tree (models/, sim/, viz/, load/, cli/,
# tests/, bench/, the lab stubs). Called by tests/arch/run.sh.
#
# A function is measured from the first line of its signature to its
# closing brace, both included. The house style puts a function's braces
# alone in column 0 (Redis's and the kernel's style), and nothing else
# there, which is what lets a few lines of awk find them; a file written
# otherwise is not measured, so tests/arch/run.sh also asks that the
# measure finds the hearts it knows (--all lists every function, its
# length, and "marked" when it gives a reason). FUNCTION_LENGTH_LIMIT=N
# sets another limit, for a look around.
set -u
cd "$(dirname "$0")/../.." || exit 2
LIMIT=${FUNCTION_LENGTH_LIMIT:-80}

if [ $# -eq 0 ]; then
  set -- $(find models sim viz load cli tests bench labs -name '*.c' ! -path '*/build/*' | sort)
fi

# For each function: "FILE:LINE NAME LINES", one a line.
measure() {
  awk '
    FNR == 1 { sig = 0; said = 0 }
    # The comment just above a signature may give a reason to be long.
    /^[[:space:]]*$/ { said = 0 }
    /Long function: / && !inbody { said = 1 }
    # A line in column 0 that opens a signature: a type or a name, not a
    # preprocessor line, a comment or a brace.
    /^[A-Za-z_]/ && sig == 0 && !/;[[:space:]]*$/ { sig = FNR; text = $0; marked = said }
    /^[A-Za-z_]/ && sig != 0 && !/^[A-Za-z_].*;[[:space:]]*$/ && !inbody { if (!index(text, "(")) { sig = FNR; text = $0; marked = said } }
    /;[[:space:]]*$/ && !inbody { sig = 0 }
    /^\{/ && sig != 0 && !inbody { inbody = 1; start = sig; head = text; next }
    /^\}/ && inbody {
      inbody = 0; sig = 0
      name = head
      if (!sub(/[[:space:]]*\(.*/, "", name)) next   # not a function (an initializer)
      sub(/.*[^A-Za-z0-9_]/, "", name)
      print FILENAME ":" start, name, FNR - start + 1 (marked ? " marked" : "")
      said = 0
    }
  ' "$@"
}

if [ "${1:-}" = "--all" ]; then shift; measure "$@"; exit 0; fi
all=$(measure "$@") || { echo "function_lengths.sh: awk failed"; exit 2; }
over=$(echo "$all" | awk -v limit="$LIMIT" '$3 > limit && $4 != "marked" { print $1 " " $2 ": " $3 " lines" }')
[ -z "$over" ] && exit 0
echo "$over"
exit 1
