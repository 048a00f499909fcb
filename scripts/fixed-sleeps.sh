#!/bin/sh
# fixed-sleeps.sh -- the sleeps in the tests that no loop around them
# re-checks: a usleep/sleep/nanosleep in tests/*.c, tests/*/*.c (the
# support code, the suites' folders) or tests/*/run.sh whose line, or one
# of the five before it, opens no while/until/for (or do) loop (a poll's sleep is
# its interval, the condition it awaits is looked at again). Prints each
# as FILE:LINE: TEXT, then the count. What such a sleep is for is the
# reader's to judge: some are the work under test (a task that holds its
# loop), the rest wait a guess for something that could be awaited.
# tests/README.md gives the count. Run from the repository's root.
set -u
cd "$(dirname "$0")/.." || exit 2
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
  files=$(git ls-files 'tests/*.c' 'tests/*/*.c' 'tests/*/*/*.c' 'tests/*/run.sh')
else                       # a release tarball
  files=$(find tests -name '*.c' -o -name run.sh | sort)
fi
files=$(printf '%s\n' "$files" | grep -v '^tests/\(shims\|bench\|fuzz\)/')
awk '
  FNR == 1 { delete prev }
  {
    c = FILENAME ~ /\.c$/
    is_sleep = c ? ($0 ~ /(^|[^a-z_])(usleep|nanosleep|sleep)\(/) \
                 : ($0 ~ /(^|[ \t;&|(])sleep [0-9.]+[ \t]*($|[;&|)#])/)
    if (is_sleep && $0 !~ /^[ \t]*(\/?\*|#)/) {
      ctx = $0 " " prev[1] " " prev[2] " " prev[3] " " prev[4] " " prev[5]
      poll = c ? (ctx ~ /(while|for) \(|do \{/) : (ctx ~ /(while|until|for) /)
      if (!poll) { n++; print FILENAME ":" FNR ": " $0 }
    }
    for (i = 5; i > 1; i--) prev[i] = prev[i - 1]; prev[1] = $0
  }
  END { print n + 0 " fixed sleeps" }' $files
