#!/usr/bin/env bash
# switches.sh BIN MODEL CONNS -- who switches, thread by thread: a real
# server under `threadlab load --conns CONNS` (6 s), and over 2 s of it
# each thread's voluntary switches (it blocked) and involuntary ones (it
# was preempted) per line answered, from /proc/PID/task/*/status. For
# docs/simulator.md ("Against the real thing"), against the simulation's
# context_switches and wakeup_preemptions (sim --json).
# With perf on the PATH (and the right to trace: root, or
# kernel.perf_event_paranoid -1), the same 2 s are also traced with `perf
# sched record`, and each kind of thread (the server's, the load
# generator) gets its percentiles of how long it waited for a core once
# woken or preempted (sch delay) and how long it ran once on one, from
# `perf sched timehist`: the picture docs/simulator.md draws of the
# multireactor (a worker waits for a core up to a scheduler tick).
set -u
BIN=${1:?usage: switches.sh BIN MODEL CONNS}; MODEL=${2:?model}; CONNS=${3:?conns}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
export THREADLAB_BOARD_DIR="$tmp/boards"
"$BIN" serve "$MODEL" --port 0 --port-file "$tmp/port" >/dev/null 2>&1 &
spid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
"$BIN" load "127.0.0.1:$(cat "$tmp/port")" --conns "$CONNS" --duration 6 --json \
    >"$tmp/load.json" 2>/dev/null &
lpid=$!
# "PID name voluntary involuntary", a line per thread of both processes.
snapshot() {
  for p in $spid $lpid; do
    for t in /proc/"$p"/task/*; do
      echo "$p $(cat "$t/comm") $(awk '/^voluntary_ctxt/ { v = $2 }
        /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$t/status")"
    done
  done
}
sleep 1; t0=$(date +%s.%N); snapshot >"$tmp/before"
if command -v perf >/dev/null &&
   perf sched record -o "$tmp/sched.data" -- sleep 2 >/dev/null 2>&1; then
  traced=1
else
  traced=0; sleep 2
fi
snapshot >"$tmp/after"; t1=$(date +%s.%N)
wait "$lpid"
rate=$(sed -n 's/.*"lines_per_s":\([0-9.]*\).*/\1/p' "$tmp/load.json")
echo "$MODEL, $CONNS connections: $rate lines/s; switches a line, thread by thread:"
paste "$tmp/before" "$tmp/after" | awk -v r="$rate" -v s="$spid" -v t0="$t0" -v t1="$t1" '{ secs = t1 - t0
  blocked = $7 - $3; preempted = $8 - $4
  if (r > 0 && blocked + preempted > 100)
    printf "  %-6s %-14s blocked %.3f  preempted %.3f\n", $1 == s ? "server" : "load", $2,
           blocked / (secs * r), preempted / (secs * r) }'
kill -INT "$spid"; wait "$spid" 2>/dev/null
[ "$traced" = 1 ] || { echo "  (no perf sched trace: perf missing or not allowed to trace)"; exit 0; }
# timehist: "time [cpu] task[tid/pid] wait sch-delay run", in ms; a
# thread is the server's or the load generator's by its pid.
perf sched timehist -i "$tmp/sched.data" 2>/dev/null | awk -v l="$lpid" -v s="$spid" '
  NR > 3 && NF >= 6 && $3 ~ /\[[0-9]+\/[0-9]+\]$/ {
    pid = $3; sub(/.*\//, "", pid); sub(/\]/, "", pid)
    if (pid == l) print "load", $5, $6; else if (pid == s) print "server", $5, $6 }' >"$tmp/hist"
# The value at fraction p of stdin's numbers, sorted.
pct() { sort -g | awk -v p="$1" '{ v[NR] = $1 } END { i = int(NR * p); print v[i < 1 ? 1 : i] }'; }
for who in server load; do
  grep "^$who " "$tmp/hist" >"$tmp/who" || continue
  printf '  %-6s %6d times on a core: waited for it p50 %s p90 %s p99 %s p99.9 %s ms; ran p50 %s p90 %s p99 %s ms\n' \
    "$who" "$(wc -l <"$tmp/who")" \
    "$(cut -d' ' -f2 "$tmp/who" | pct .5)" "$(cut -d' ' -f2 "$tmp/who" | pct .9)" \
    "$(cut -d' ' -f2 "$tmp/who" | pct .99)" "$(cut -d' ' -f2 "$tmp/who" | pct .999)" \
    "$(cut -d' ' -f3 "$tmp/who" | pct .5)" "$(cut -d' ' -f3 "$tmp/who" | pct .9)" \
    "$(cut -d' ' -f3 "$tmp/who" | pct .99)"
done
