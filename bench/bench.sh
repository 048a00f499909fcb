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
export THREADLAB_BOARD_DIR="$tmp/boards"
trap 'kill $spid $npid 2>/dev/null; rm -rf "$tmp"' EXIT
npid=""

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

# ---- the board's cost ---------------------------------------------------------
# Two BIO servers, one publishing its board and one with --no-board, loaded
# in turn (never at once) with the same workload, alternating, so that drift
# in the machine's speed hits both alike. Target: the board costs under 3%.
ROUNDS=${BENCH_ROUNDS:-5}
"$BIN" serve bio --port 0 --no-board --port-file "$tmp/nport" >/dev/null 2>&1 &
npid=$!
for _ in $(seq 50); do [ -s "$tmp/nport" ] && break; sleep 0.1; done
nport=$(cat "$tmp/nport")
echo
echo "board overhead: bio, 64 conns, depth 16, 64-byte lines, ${DURATION}s per run, $ROUNDS rounds alternating"
printf '%-6s %14s %14s %8s\n' round board no-board ratio
sum_b=0 sum_n=0
for r in $(seq "$ROUNDS"); do
  "$BIN" load "127.0.0.1:$port" --conns 64 --depth 16 --duration "$DURATION" --threads 2 --json >"$tmp/b" 2>/dev/null || true
  "$BIN" load "127.0.0.1:$nport" --conns 64 --depth 16 --duration "$DURATION" --threads 2 --json >"$tmp/n" 2>/dev/null || true
  b=$(field lines_per_s "$tmp/b"); n=$(field lines_per_s "$tmp/n")
  printf '%-6s %14.0f %14.0f %8.3f\n' "$r" "$b" "$n" "$(echo "$b $n" | awk '{print $1/$2}')"
  sum_b=$(echo "$sum_b $b" | awk '{print $1+$2}'); sum_n=$(echo "$sum_n $n" | awk '{print $1+$2}')
done
echo "$sum_b $sum_n" | awk '{printf "mean   %14.0f %14.0f %8.3f  (board / no-board lines/s; 1.000 = free)\n", $1/'"$ROUNDS"', $2/'"$ROUNDS"', $1/$2}'
echo "servers: $BIN serve bio --port 0   and   $BIN serve bio --port 0 --no-board"
