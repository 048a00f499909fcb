#!/bin/sh
# bench.sh -- BIO lines/s and p99 at 1, 64 and 512 connections, depth 1 and
# 16, 64-byte lines: one server, one table, each row measured in turn.
#
# The client and the server share this machine's cores, so the absolute
# figures say as much about the machine as about the model: compare rows
# (and, later, models) measured in the same run, not numbers across runs.
set -eu
BIN=${1:-build/threadlab}
DURATION=${BENCH_DURATION:-3}
tmp=$(mktemp -d)
trap 'kill $spid 2>/dev/null; rm -rf "$tmp"' EXIT

"$BIN" serve bio --port 0 --port-file "$tmp/port" >/dev/null 2>&1 &
spid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$2"; }

echo "threadlab bench: bio, 64-byte lines, ${DURATION}s per row, $(nproc) cores shared by client and server"
echo "$(uname -srm), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
printf '%-6s %-6s %12s %10s %10s %8s\n' conns depth lines/s p50_us p99_us errors
for conns in 1 64 512; do
  for depth in 1 16; do
    threads=$([ "$conns" -gt 1 ] && echo 2 || echo 1)
    cmd="$BIN load 127.0.0.1:$port --conns $conns --depth $depth --size 64 --duration $DURATION --threads $threads --json"
    $cmd >"$tmp/out" 2>/dev/null || true
    printf '%-6s %-6s %12.0f %10s %10s %8s\n' "$conns" "$depth" \
      "$(field lines_per_s "$tmp/out")" "$(field p50 "$tmp/out")" \
      "$(field p99 "$tmp/out")" "$(field errors_total "$tmp/out")"
  done
done
echo
echo "each row: $BIN load 127.0.0.1:PORT --conns C --depth D --size 64 --duration $DURATION --threads (1 for one conn, else 2) --json"
echo "server:   $BIN serve bio --port 0"
