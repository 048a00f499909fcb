#!/bin/sh
# run.sh -- counts that agree: a server's board lists every thread of its
# process, so `top` (the pane's "threads N:"), `/proc/PID/task` and the
# demo's table give one number, for every model, with and without
# --offload.
#
# 1. `threadlab serve` as a real process, idle and then holding three
#    connections: the board's thread count (`top --json`) must equal the
#    entries of /proc/PID/task. A sample counts only when the board said
#    the same before and after /proc was read (no thread was starting or
#    ending in between); the server is steady, so such samples come at once,
#    and every one of them must agree. Then bio and reactor during a
#    graceful stop that waits for a line in !sleep: no thread appears that
#    the board does not show. Every serve must exit 0 after SIGTERM.
# 2. `threadlab demo --plain`, one model at a time: the table's threads
#    column must equal the most the pane showed.
# 3. The two medians are named apart: the pane's "handle p50" (the
#    server's handling time; handle_p50_us in top --json), the table's
#    "round-trip" p50 (the client's; round_trip_p50_us in the CSV), and a
#    sweep CSV with the header before the rename still overlays.
set -u
BIN=${THREADLAB_BIN:-build/threadlab}
tmp=$(mktemp -d)
server_pid="" load_pid=""
export THREADLAB_BOARD_DIR="${THREADLAB_BOARD_DIR:-$tmp/boards}/counts-$$"
mkdir -p -m 700 "$THREADLAB_BOARD_DIR"
. "$(dirname "$0")/../lib.sh"
cleanup() {
  [ -n "$load_pid" ] && kill -9 "$load_pid" 2>/dev/null
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  rm -rf "$tmp" "$THREADLAB_BOARD_DIR"
}
trap cleanup EXIT
echo "== tests/counts/run.sh ($BIN)"
# ThreadSanitizer's runtime starts a thread of its own in every process (a
# background thread, named like the binary): /proc lists it, the program
# does not own it. In a TSan build it is counted here, exactly one.
runtime=0
if grep -qa "__tsan_init" "$BIN"; then
  runtime=1
  echo "  (a TSan build: /proc lists 1 thread of the sanitizer's runtime beside the board's)"
fi

# board_json PID: one snapshot of the server's board, as top --json prints it.
board_json() { timeout 10 "$BIN" top --json --count 1 --interval 100 "$1" 2>/dev/null | head -1; }
# board_threads JSON: live threads, summed over the states.
board_threads() {
  printf '%s' "$1" | sed -n 's/.*"threads":{\([^}]*\)}.*/\1/p' \
    | tr ',' '\n' | awk -F: '{ n += $2 } END { if (NR) print n }'
}
board_active() { printf '%s' "$1" | sed -n 's/.*"active":\([0-9]*\).*/\1/p'; }

# agree LABEL PID [N]: the board's count and /proc's, in N steady samples
# (default 3).
agree() {
  stable=0 tries=0 last="" need=${3:-3}
  while [ "$stable" -lt "$need" ] && [ "$tries" -lt 40 ]; do
    tries=$((tries + 1))
    before=$(board_threads "$(board_json "$2")")
    proc=$(($(ls "/proc/$2/task" 2>/dev/null | wc -l) - runtime))
    after=$(board_threads "$(board_json "$2")")
    [ -n "$before" ] && [ "$before" = "$after" ] || { sleep 0.1; continue; }
    stable=$((stable + 1)) last="board $before, /proc $proc"
    if [ "$before" != "$proc" ]; then
      bad "$1: the board counts $before threads, /proc/$2/task lists $proc:" \
          "$(cat /proc/"$2"/task/*/comm 2>/dev/null | tr '\n' ' ')"
      return
    fi
  done
  if [ "$stable" -lt "$need" ]; then
    bad "$1: the board never held still for a sample in $tries tries ($last)"
  else
    echo "  ok: $1: $last"; ok
  fi
}

# stopped LABEL LOG: reap $server_pid; a graceful stop exits 0 (and a
# sanitizer's report would make it fail: its log is shown).
stopped() {
  wait "$server_pid" 2>/dev/null; st=$?; server_pid=""
  [ "$st" = 0 ] && ok || { bad "$1 exited $st after SIGTERM:"; tail -5 "$2"; }
}

board_sleeping() { printf '%s' "$1" | sed -n 's/.*"blocked-sleep":\([0-9]*\).*/\1/p'; }
board_closing() { printf '%s' "$1" | sed -n 's/.*"closing":\([a-z]*\).*/\1/p'; }

# await_board PID FIELD WANT: until FIELD (board_active, board_sleeping,
# board_closing) of the board says WANT (10 s at most).
await_board() {
  for _ in $(seq 100); do
    [ "$("$2" "$(board_json "$1")")" = "$3" ] && return 0
    sleep 0.1
  done
  return 1
}
# wait_active PID N: until the board shows N open connections.
wait_active() { await_board "$1" board_active "$2"; }

# 1. serve: idle, then three connections open (bio: a thread each; the
#    pool: a task thread each).
for case in "bio" "bio --max-threads 8" "pool" "pool --min 1 --max 8" \
            "reactor" "reactor --offload 2" "multireactor" \
            "multireactor --workers 3 --offload 2"; do
  # shellcheck disable=SC2086 # the case holds the model and its options
  start_server counts $case
  if [ -z "$port" ]; then
    bad "serve $case never listened: $(tail -1 "$tmp/counts.log")"
    kill -9 "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; continue
  fi
  agree "serve $case, idle" "$server_pid"
  "$BIN" load "127.0.0.1:$port" --conns 3 --rate 30 --duration 30 --no-progress \
    >/dev/null 2>&1 &
  load_pid=$!
  if wait_active "$server_pid" 3; then
    agree "serve $case, 3 connections" "$server_pid"
  else
    bad "serve $case: the board never showed 3 connections"
  fi
  kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null; load_pid=""
  kill -TERM "$server_pid"
  timeout 15 sh -c "while kill -0 $server_pid 2>/dev/null; do sleep 0.1; done" \
    || { bad "serve $case did not stop in 15 s"; kill -9 "$server_pid"; }
  stopped "serve $case" "$tmp/counts.log"
done

# 1b. A graceful stop that waits for a line in !sleep: the stopping server
#    makes no thread the board does not show (a second Ctrl-C is caught by
#    a signal handler, not by a thread made at the stop).
for m in bio reactor; do
  start_server stopping "$m"
  "$BIN" load "127.0.0.1:$port" --conns 1 --lines 1 --mix sleep=5000:100 --no-progress \
    >/dev/null 2>&1 &
  load_pid=$!
  if wait_active "$server_pid" 1 && await_board "$server_pid" board_sleeping 1; then
    kill -TERM "$server_pid"
    if await_board "$server_pid" board_closing true; then
      agree "serve $m, stopping" "$server_pid" 1   # one sample: the stop ends
    else
      bad "serve $m: the board never showed the stop begun"
    fi
  else
    bad "serve $m: the board never showed the connection in its !sleep"
  fi
  timeout 15 sh -c "while kill -0 $server_pid 2>/dev/null; do sleep 0.1; done" \
    || { bad "serve $m did not stop in 15 s"; kill -9 "$server_pid"; }
  stopped "serve $m, stopping" "$tmp/stopping.log"
  wait "$load_pid" 2>/dev/null; load_pid=""
done

# 2. demo: the table's threads against the pane's "threads N:".
for m in bio pool reactor multireactor; do
  timeout 60 "$BIN" demo --plain --models "$m" --duration 2 --conns 4 --interval 200 \
    >"$tmp/demo.$m" 2>&1 || { bad "demo --models $m failed: $(tail -1 "$tmp/demo.$m")"; continue; }
  pane=$(sed -n 's/^ *threads \([0-9]*\):.*/\1/p' "$tmp/demo.$m" | sort -n | tail -1)
  table=$(awk -v m="$m" -v rt="$runtime" '/^model +lines\/s/ { for (i = 1; i <= NF; i++) if ($i == "threads") c = i; next }
                         c && $1 == m { print $c - rt }' "$tmp/demo.$m")
  if [ -n "$pane" ] && [ "$pane" = "$table" ]; then
    echo "  ok: demo $m: pane threads $pane, table $table"; ok
  else
    bad "demo $m: the pane showed at most ${pane:-nothing}, the table says ${table:-nothing}"
  fi
done

# 3. Two medians, two names: the pane's is the server's handling time
#    ("handle p50", top --json handle_p50_us), the table's the client's
#    round trip (a "round-trip" heading over p50 and p99; round_trip_p50_us
#    in the CSV and JSON). Never one label for both.
grep -q "handle p50 " "$tmp/demo.reactor" && ok \
  || bad "the demo's pane does not name its p50 'handle p50'"
awk '/^model +lines\/s +p50 +p99 / { exit !(prev ~ /^ +-+round-trip-+$/ && index(prev, "-") == 23) } { prev = $0 }
     END { if (!NR) exit 1 }' "$tmp/demo.reactor" && ok \
  || bad "the demo's table has no 'round-trip' heading over p50 and p99: $(grep -B1 '^model ' "$tmp/demo.reactor")"
start_server names reactor
if [ -n "$port" ]; then
  json=$(board_json "$server_pid")
  case "$json" in
    *'"handle_p50_us":'*'"handle_p99_us":'*) ok ;;
    *) bad "top --json does not name handle_p50_us, handle_p99_us: $json" ;;
  esac
  case "$json" in *'"p50_us"'*) bad "top --json still has an unnamed p50_us: $json" ;; *) ok ;; esac
fi
kill -TERM "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; server_pid=""
timeout 60 "$BIN" compare --models reactor --duration 1 --conns 2 --csv "$tmp/c.csv" \
  >/dev/null 2>&1 || bad "compare --models reactor failed"
head -1 "$tmp/c.csv" 2>/dev/null | grep -q ',round_trip_p50_us,round_trip_p99_us,round_trip_p999_us,' \
  && ok || bad "compare --csv does not name round_trip_p50_us: $(head -1 "$tmp/c.csv" 2>/dev/null)"
# A sweep CSV written before the rename still overlays (same columns).
printf '%s\n%s\n' \
  'model,var,value,source,lines_per_s,p50_us,p99_us,p999_us,peak_threads,resident_kb,cpu_s,context_switches,errors,cpu_busy_pct,reserved_kb,server' \
  'bio,conns,1,real,1000.0,50.0,100.0,200.0,3,3000,0.100,10,0,-1.00,-1,ok' >"$tmp/old.csv"
timeout 60 "$BIN" sim bio --duration 0.2 --sweep conns=1,2 --overlay "$tmp/old.csv" \
  --plot "$tmp/old.svg" --csv "$tmp/sim.csv" >"$tmp/sim.out" 2>&1 \
  && head -1 "$tmp/sim.csv" | grep -q ',round_trip_p50_us,' && ok \
  || bad "a sweep CSV with the old header no longer overlays: $(tail -2 "$tmp/sim.out")"

summary counts
