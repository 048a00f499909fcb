#!/bin/sh
# run.sh -- architecture tests. First what the tree promises, read
# statically by the scripts beside this file: every path the docs name
# exists (doc_paths.sh), each model's main file points at functions that
# are where it says (model_guides.sh), every header function states its
# thread (thread_contracts.sh), no function runs over 80 lines without a
# marked reason (function_lengths.sh), includes run only down (layers.sh),
# the hearts report to the board only through the probe (hearts.sh),
# the simulator's files call each other in no circle (sim_calls.sh), and
# calls between the files of a folder run one way (circles.sh, from the
# objects of this build).
# Then each model's threads and fds, read from
# /proc/PID/task and /proc/PID/fd while it serves load, must be the model's
# shape: BIO a thread per connection, the pool between min and max, the
# reactor one I/O thread with one epoll fd and nonblocking sockets, the
# multi-reactor exactly its bosses and workers, vthread its carriers.
set -u
BIN=${THREADLAB_BIN:-build/threadlab}
tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
spid="" lpid=""
. "$(dirname "$0")/../lib.sh"
cleanup() {
  [ -n "$lpid" ] && kill "$lpid" 2>/dev/null
  [ -n "$spid" ] && kill -INT "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# threads PREFIX: threads of the server whose name starts with PREFIX.
threads() {
  n=0
  for t in /proc/"$spid"/task/*; do
    case "$(cat "$t/comm" 2>/dev/null)" in "$1"*) n=$((n + 1)) ;; esac
  done
  echo "$n"
}
# ThreadSanitizer adds a background thread of its own to every process.
sanitizer_threads=0
case "$BIN" in */tsan/*) sanitizer_threads=1 ;; esac
all_threads() { echo $(( $(ls /proc/"$spid"/task | wc -l) - sanitizer_threads )); }
epoll_fds() { ls -l /proc/"$spid"/fd 2>/dev/null | grep -c 'anon_inode:\[eventpoll\]'; }
# socket_modes: "nonblocking blocking" counts over the server's TCP sockets
# (the listening one included).
socket_modes() { socket_modes_of /proc/"$spid"/fd/*; }
# socket_modes_of FD_PATH...: the same over these entries of /proc/$spid/fd.
# A connection that closes between the listing and the read of its flags
# (a load ending while we count), or a server gone meanwhile, has no
# fdinfo left: skipped, not counted. Read as empty flags, it once counted
# as a blocking socket in a reactor.
socket_modes_of() {
  nb=0 bl=0
  for fd in "$@"; do
    case "$(readlink "$fd" 2>/dev/null)" in socket:*) ;; *) continue ;; esac
    flags=$(sed -n 's/^flags:[[:space:]]*//p' /proc/"$spid"/fdinfo/"${fd##*/}" 2>/dev/null) \
      && [ -n "$flags" ] || continue
    if [ $(( 0$flags & 04000 )) -ne 0 ]; then nb=$((nb + 1)); else bl=$((bl + 1)); fi
  done
  echo "$nb $bl"
}
# expect_eq WHAT GOT WANT
expect_eq() { [ "$2" = "$3" ] && ok || bad "$1: $2, wanted $3"; }
# eventually WHAT WANT CMD...: poll CMD until it prints WANT (5 s)
eventually() {
  what=$1 want=$2; shift 2
  for _ in $(seq 50); do got=$("$@"); [ "$got" = "$want" ] && { ok; return; }; sleep 0.1; done
  bad "$what: $got, wanted $want"
}

# eventually_at_least WHAT MIN CMD...: poll CMD until it prints MIN or
# more (10 s: a loaded machine connects 20 clients slowly)
eventually_at_least() {
  what=$1 min=$2; shift 2
  for _ in $(seq 100); do got=$("$@"); [ "$got" -ge "$min" ] && { ok; return; }; sleep 0.1; done
  bad "$what: $got, wanted $min or more"
}
nonblocking_sockets() { set -- $(socket_modes); echo "$1"; }

serve() {
  start_server serve "$@"
  spid=$server_pid
}
load() {
  "$BIN" load "127.0.0.1:$port" --conns 20 --duration "$1" --timeout 30 --no-progress >"$tmp/load.log" 2>&1 &
  lpid=$!
}
finish() {
  wait "$lpid"; lpid=""
  kill -INT "$spid"; wait "$spid"; spid=""
}

echo "== tests/arch/run.sh ($BIN)"

# The repository points only inside itself: no README, doc, lab, comment
# or --help text may send a reader to the notes the course was written
# from (they are not shipped; docs/reading/ is the course's own). The
# simulator's random seed is another word and is left alone. Outside a git
# checkout (a release tarball) every file is searched instead.
OUTSIDE_POINTERS='\.\./shared|shared/seeds|seeds?/[0-9]{3}|seed notes?|the seeds|seeds? \(`[0-9]{3}|seed.s 时间轮|种子笔记'
outside_pointers() {
  ( cd "$(dirname "$0")/../.." &&
    # A checkout of its own (not a tarball unpacked inside another repo).
    if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
      git grep -n -I -i -E "$OUTSIDE_POINTERS" -- . ':!tests'
    else
      grep -r -n -I -i -E --exclude-dir=tests --exclude-dir=build --exclude-dir=.git \
        "$OUTSIDE_POINTERS" .
    fi )
}
found=$(outside_pointers); rc=$?
case $rc in
  0) bad "files point outside the repository (use docs/reading/):"
     echo "$found" | sed 's/^/    /' ;;
  1) ok ;;                                 # grep found nothing
  *) bad "could not search the repository for outside pointers (grep exit $rc)" ;;
esac

# The tree as the docs and the code describe it (static checks, no
# server). Each check prints what it found wrong.
static_check() {
  what=$1; shift
  if found=$("$@" 2>&1); then ok; else
    bad "$what:"; echo "$found" | sed 's/^/    /'
  fi
}
here=$(dirname "$0")
static_check "paths in the docs that name nothing in the tree" sh "$here/doc_paths.sh"
static_check "model main files whose reading guide names a function not where it says" \
  sh "$here/model_guides.sh"
static_check "header functions without a thread contract (models/**/*.h)" \
  sh "$here/thread_contracts.sh"
static_check "functions over 80 lines without a marked reason (every .c file)" \
  sh "$here/function_lengths.sh"
static_check "includes that run back up (models/ < sim/, viz/ < load/ < cli/)" \
  sh "$here/layers.sh"
static_check "hearts that call the board directly, not through the probe (models/probe/probe*.h)" \
  sh "$here/hearts.sh"
# The hearts check bites: a made-up heart that adds to a counter itself.
printf 'void f(void)\n{\n    board_add(b, CTR_LINES, 1);\n}\n' >"$tmp/heart.c"
direct=$(sh "$here/hearts.sh" "$tmp/heart.c"; echo "exit $?")
expect_eq "the hearts check on a heart that calls board_add" "$direct" \
  "$(printf '%s\nexit 1' "$tmp/heart.c:3:    board_add(b, CTR_LINES, 1);")"
static_check "files of one folder that call each other in a circle (models/*/, viz/)" \
  env BUILD="$(dirname "$BIN")" sh "$here/circles.sh"
# The circle check bites: two made-up files that call each other.
mkdir -p "$tmp/circle"
printf 'void b(void);\nvoid a(void) { b(); }\n' >"$tmp/circle/a.c"
printf 'void a(void);\nvoid b(void) { a(); }\n' >"$tmp/circle/b.c"
for f in a b; do ${CC:-cc} -c -o "$tmp/circle/$f.o" "$tmp/circle/$f.c"; done
circle=$(sh "$here/circles.sh" "$tmp/circle"); rc=$?
expect_eq "the circle check on two files that call each other" "$rc: $(echo "$circle" | tail -1)" \
  "1: $tmp/circle: a circle of files: a.c b.c"
# The tests' fixed sleeps, counted as tests/README.md says (a new one
# that waits a guess shows as a changed count; an await does not).
sleeps=$(sh "$here/../../scripts/fixed-sleeps.sh" | tail -1 | cut -d' ' -f1)
grep -q "lists them, $sleeps " "$here/../README.md" && ok ||
  bad "tests/README.md does not give the fixed sleeps' count, $sleeps (scripts/fixed-sleeps.sh)"
# Every test source is under 1,000 lines: a longer suite is a folder.
long=$(wc -l $(cd "$here/../.." && git ls-files 'tests/*.c' 'tests/*/*.c' 'tests/*/*/*.c' 2>/dev/null |
        sed "s#^#$here/../../#") 2>/dev/null | awk '$2 != "total" && $1 > 1000 { print $2 " (" $1 " lines)" }')
[ -z "$long" ] && ok || bad "test files over 1,000 lines (split them by subject into a folder): $long"
# The layer check bites: a simulator file that reaches up into the screens.
mkdir -p "$tmp/sim" && printf '#include "sim/sim.h"\n#include "viz/view.h"\n' >"$tmp/sim/up.c"
upward=$(cd "$tmp" && sh "$OLDPWD/$here/layers.sh" sim/up.c)
expect_eq "the layer check on a sim file that includes viz/" "$upward" "sim/up.c:2: sim/ includes viz/, which is not below it"
# The simulator's files call one way: the engine through each model's
# table, the models down to the shared helpers and the core (nm over the
# objects of the binary under test).
sim_objs=$(dirname "$BIN")/obj/sim
static_check "a circle of calls among the simulator's files (sim/*.c)" \
  env SIM_OBJ_DIR="$sim_objs" sh "$here/sim_calls.sh"
# The circle check bites: two made-up files that call each other.
printf 'void b(void);\nvoid a(void) { b(); }\n' >"$tmp/sim/ping.c"
printf 'void a(void);\nvoid b(void) { a(); }\n' >"$tmp/sim/pong.c"
for f in ping pong; do "${CC:-cc}" -c -o "$tmp/sim/$f.o" "$tmp/sim/$f.c"; done
circle=$(sh "$here/sim_calls.sh" "$tmp/sim/ping.o" "$tmp/sim/pong.o"; echo "exit $?")
expect_eq "the circle check on two files that call each other" "$circle" \
  "$(printf 'ping.c -> pong.c: b\npong.c -> ping.c: a\na circle of calls among these files: ping.c pong.c\nexit 1')"
# The measure must see the hearts, or a change of brace style would make
# every function vanish from it and the check pass on nothing.
hearts=$(sh "$here/function_lengths.sh" --all models/blocking/conn.c \
           models/threadpool/pool.c models/loop/loop.c | awk '{print $2}' |
         grep -cxE 'conn_serve|watchdog_main|loop_iteration')
expect_eq "hearts the function measure finds" "$hearts" 3

# A socket that the fd listing saw and that closed before its flags were
# read: forced here by a readlink that names a socket for an fd this shell
# never had.
closed_under_us() (
  readlink() { echo "socket:[0]"; }
  spid=$$
  socket_modes_of /proc/$$/fd/999
)
expect_eq "socket modes of an fd closed between the listing and the read" \
  "$(closed_under_us)" "0 0"

# BIO: a thread per connection, blocking sockets, no epoll.
# The load runs until the test has looked (600 s is a hang guard): one
# that ended on its own clock could close its sockets before they were
# counted (a loaded ASan run counted 1 of 21).
serve bio
load 600
eventually "bio: connection threads under 20 connections" 20 threads conn-
expect_eq "bio: acceptor threads" "$(threads acceptor)" 1
expect_eq "bio: epoll fds" "$(epoll_fds)" 0
set -- $(socket_modes)
expect_eq "bio: nonblocking sockets" "$1" 0
[ "$2" -ge 21 ] && ok || bad "bio: $2 blocking sockets, wanted 20 connections + the listener"
kill "$lpid" 2>/dev/null; wait "$lpid"; lpid=""
eventually "bio: connection threads after the load" 0 threads conn-
kill -INT "$spid"; wait "$spid"; spid=""

# The pool: at most max threads, back to min when idle.
serve pool --min 2 --max 8 --idle-ms 500
expect_eq "pool: task threads at start (min)" "$(threads task-)" 2
load 600                                 # until killed, as bio's
eventually "pool: task threads under 20 connections (max)" 8 threads task-
expect_eq "pool: watchdog threads" "$(threads watchdog)" 1
kill "$lpid" 2>/dev/null; wait "$lpid"; lpid=""
eventually "pool: task threads after idle-ms (min)" 2 threads task-
kill -INT "$spid"; wait "$spid"; spid=""

# The reactor: one I/O thread, one epoll, nonblocking sockets.
serve reactor
[ -n "$port" ] || bad "reactor: the server wrote no port: $(cat "$tmp/serve.log")"
load 10
eventually_at_least "reactor: nonblocking sockets (20 connections + the listener)" 21 \
  nonblocking_sockets
[ "$got" -ge 21 ] || { echo "    the load:"; sed 's/^/    /' "$tmp/load.log"; }
expect_eq "reactor: loop threads" "$(threads reactor)" 1
expect_eq "reactor: all threads (main, loop, checker)" "$(all_threads)" 3
expect_eq "reactor: epoll fds" "$(epoll_fds)" 1
set -- $(socket_modes)
expect_eq "reactor: blocking sockets" "$2" 0
kill "$lpid" 2>/dev/null                 # the load has done its part
finish

# The multi-reactor: exactly bosses + workers loops (+ checker, + business).
serve multireactor --bosses 1 --workers 4
load 30
eventually_at_least "multireactor: nonblocking sockets (20 connections + the listener)" 21 \
  nonblocking_sockets
expect_eq "multireactor: boss threads" "$(threads boss)" 1
expect_eq "multireactor: worker threads" "$(threads worker-)" 4
expect_eq "multireactor: all threads (main, 5 loops, checker)" "$(all_threads)" 7
expect_eq "multireactor: epoll fds (one per loop)" "$(epoll_fds)" 5
set -- $(socket_modes)
expect_eq "multireactor: blocking sockets" "$2" 0
kill "$lpid" 2>/dev/null                 # the load has done its part
finish
serve multireactor --bosses 2 --workers 3 --offload 2
load 1
sleep 0.5
expect_eq "multireactor --bosses 2: boss threads" "$(threads boss-)" 2
expect_eq "multireactor --offload 2: business threads" "$(threads biz-)" 2
expect_eq "multireactor: all threads (main, 5 loops, checker, watchdog, 2 biz)" "$(all_threads)" 10
finish

# vthread: main, the acceptor, the carriers and the monitor, however many
# connections; one epoll per carrier; every connection's socket nonblocking.
serve vthread --carriers 2
load 10
eventually_at_least "vthread: nonblocking sockets (20 connections)" 20 nonblocking_sockets
expect_eq "vthread: carrier threads" "$(threads carrier-)" 2
expect_eq "vthread: all threads (main, acceptor, 2 carriers, monitor)" "$(all_threads)" 5
expect_eq "vthread: epoll fds (one per carrier)" "$(epoll_fds)" 2
kill "$lpid" 2>/dev/null
finish

summary arch
