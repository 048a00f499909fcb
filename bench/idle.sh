#!/bin/sh
# idle.sh -- what an idle connection costs each model that serves many on
# a few threads: memory (RSS) per connection and the threads, with N
# connections open that send a line now and then.
#
#   bench/idle.sh [BIN]         (make bench runs it after bench.sh)
#
# For each model: start it, read its RSS (VmRSS) and threads; open N
# connections over 5 s with threadlab load at 200 lines/s in all (each
# connection sends a line every N/200 s: idle, not dead); once the server
# holds N connections, read RSS and threads again, and how long the
# connections took to be accepted (a connect that finds the accept queue
# full is retried by the client's kernel 1, 3, 7 ... s later). RSS per
# connection is the difference over N. BIO is left out: N kernel threads
# on a shared machine measure the machine, and its cost (a thread and its
# stack's touched pages per connection) is in docs/models/bio.md.
#
# Environment:
#   BENCH_IDLE_CONNS=N  connections (default 18000, lowered to what the fd
#                       limit allows: the client and the server each hold
#                       one fd per connection)
set -eu
BIN=${1:-build/threadlab}
[ -x "$BIN" ] || { echo "idle: no $BIN (run make)" >&2; exit 2; }
N=${BENCH_IDLE_CONNS:-18000}
case $N in ''|*[!0-9]*) echo "idle: BENCH_IDLE_CONNS is not a whole number: '$N'" >&2; exit 2 ;; esac
fits=$(( $(ulimit -n) - 200 ))
if [ "$N" -gt "$fits" ]; then
  echo "idle: $N connections do not fit the fd limit ($(ulimit -n)): $fits instead"
  N=$fits
fi
tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
spid="" lpid=""
trap 'for p in $lpid $spid; do kill -TERM $p 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
threads() { awk '/^Threads:/ { print $2 }' "/proc/$1/status"; }
# conns PID: the server's open connections: its fds that are sockets, but
# the listener.
conns() { echo $(( $(ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'socket:') - 1 )); }

echo
echo "idle connections: $N, opened over 5 s, 200 lines/s in all (each connection a line every $((N / 200)) s)"
printf '%-14s %9s %7s %9s %12s %12s %8s %8s\n' model conns open_s rss_kb_0 rss_kb_idle kib_per_conn threads_0 threads
for spec in "reactor:reactor" "multireactor:multireactor" "vthread:vthread" "vthread-16k:vthread --stack 16K"; do
  label=${spec%%:*}
  # shellcheck disable=SC2086
  "$BIN" serve ${spec#*:} --port 0 --port-file "$tmp/$label.port" >/dev/null 2>&1 &
  spid=$!
  for _ in $(seq 100); do [ -s "$tmp/$label.port" ] && break; sleep 0.1; done
  [ -s "$tmp/$label.port" ] || { echo "idle: $label did not start" >&2; exit 1; }
  sleep 0.5
  rss0=$(rss_kb "$spid") th0=$(threads "$spid")
  "$BIN" load "127.0.0.1:$(cat "$tmp/$label.port")" --conns "$N" --ramp 5 --rate 200 \
      --duration 120 --threads 2 --timeout 60 --json >"$tmp/out" 2>/dev/null &
  lpid=$!
  # Until the server holds N connections (give up after 100 s, well
  # before the load ends), then one second for the last ones' first line.
  t0=$(date +%s.%N)
  for _ in $(seq 1000); do [ "$(conns "$spid")" -ge "$N" ] && break; sleep 0.1; done
  open_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  sleep 1
  held=$(conns "$spid") rss=$(rss_kb "$spid") th=$(threads "$spid")
  printf '%-14s %9d %7s %9d %12d %12.1f %8d %8d\n' "$label" "$held" "$open_s" "$rss0" "$rss" \
    "$(awk -v a="$rss" -v b="$rss0" -v n="$held" 'BEGIN { print (n > 0 ? (a - b) / n : 0) }')" "$th0" "$th"
  kill -INT "$lpid" 2>/dev/null || true; wait "$lpid" 2>/dev/null || true; lpid=""
  kill -TERM "$spid" 2>/dev/null || true; wait "$spid" 2>/dev/null || true; spid=""
done
echo "each row: $BIN serve MODEL --port 0, then $BIN load 127.0.0.1:PORT --conns $N --ramp 5 --rate 200 --duration 120 --threads 2"
echo "(the load stopped with SIGINT once measured); open_s: from the load's start until the server held them all."
echo "RSS from /proc/PID/status (VmRSS) before the load and with every connection open;"
echo "threads from the same file (vthread: carriers + monitor + acceptor + main, whatever N)."
