#!/bin/sh
# hearts.sh [FILE.c...] -- the hearts call no board_ function: the files
# a student reads for a mechanism (the blocking connection and acceptor,
# the pool, the loop, the channel, the loop server, the virtual threads)
# report to the board through the probe layer (models/probe/probe.h,
# probe_loop.h, probe_pool.h, probe_vthread.h), one call per event, so that they read as the mechanism
# and not as its instruments. Prints each direct call as FILE:LINE: TEXT
# and exits 1 if there is one. Only a name that begins with board_ is the
# board's own (a keyboard_ or clipboard_ function would not be). Without
# arguments it reads the hearts below. Called by tests/arch/run.sh.
set -u
cd "$(dirname "$0")/../.." || exit 2
if [ $# -eq 0 ]; then
  set -- models/blocking/conn.c models/blocking/acceptor.c models/threadpool/pool.c \
         models/loop/loop.c models/reactive/channel.c models/multireactor/loopserver.c \
         models/vthread/vthread.c models/vthread/runtime.c models/vthread/carrier.c \
         models/vthread/park.c models/vthread/run_queue.c models/vthread/monitor.c
fi
bad=0
for f in "$@"; do
  [ -f "$f" ] || { echo "$f: no such heart file"; bad=1; continue; }
  # Comments are not calls: drop /* ... */ on one line and the lines of a
  # comment block (those starting with " *").
  hits=$(sed -e 's#/\*.*\*/##g' -e 's#^[[:space:]]*\*.*##' -e 's#^[[:space:]]*/\*.*##' "$f" |
         grep -nE '(^|[^A-Za-z0-9_])board_[a-z_]*[[:space:]]*\(')
  [ -n "$hits" ] && { echo "$hits" | sed "s#^#$f:#"; bad=1; }
done
exit $bad
