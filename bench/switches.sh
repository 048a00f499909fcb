#!/usr/bin/env bash
# switches.sh BIN MODEL CONNS -- who switches, thread by thread: a real
# server under `threadlab load --conns CONNS` (4 s), and over 2 s of it
# each thread's voluntary switches (it blocked) and involuntary ones (it
# was preempted) per line answered, from /proc/PID/task/*/status. For
# docs/simulator.md ("Third pass"), against the simulation's
# context_switches and wakeup_preemptions (sim --json).
set -u
BIN=${1:?usage: switches.sh BIN MODEL CONNS}; MODEL=${2:?model}; CONNS=${3:?conns}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
export THREADLAB_BOARD_DIR="$tmp/boards"
"$BIN" serve "$MODEL" --port 0 --port-file "$tmp/port" >/dev/null 2>&1 &
spid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
"$BIN" load "127.0.0.1:$(cat "$tmp/port")" --conns "$CONNS" --duration 4 --json \
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
sleep 1; snapshot >"$tmp/before"; sleep 2; snapshot >"$tmp/after"
wait "$lpid"
rate=$(sed -n 's/.*"lines_per_s":\([0-9.]*\).*/\1/p' "$tmp/load.json")
echo "$MODEL, $CONNS connections: $rate lines/s; switches a line, thread by thread:"
paste "$tmp/before" "$tmp/after" | awk -v r="$rate" -v s="$spid" '{
  blocked = $7 - $3; preempted = $8 - $4
  if (r > 0 && blocked + preempted > 100)
    printf "  %-6s %-14s blocked %.3f  preempted %.3f\n", $1 == s ? "server" : "load", $2,
           blocked / (2 * r), preempted / (2 * r) }'
kill -INT "$spid"; wait "$spid" 2>/dev/null
