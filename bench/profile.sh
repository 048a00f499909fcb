#!/bin/sh
# profile.sh -- user instructions and syscalls per line of one server, at
# 64 connections x depth 16, 64-byte lines; for docs/performance.md.
#
#   bench/profile.sh NAME SERVER-COMMAND...
#   e.g. bench/profile.sh reactor build/threadlab serve reactor --port
#        bench/profile.sh uv build/peers/uv_echo
#
# The port is appended to the command (so a threadlab command ends in
# --port). Instructions come from valgrind's callgrind, which counts them
# one by one, so they do not depend on how busy the machine is: two runs of
# 100 000 and 300 000 lines, and their difference over 200 000 lines, so
# that start-up and shutdown cancel. Syscalls come from strace -f -c over
# one run of 100 000 lines (start-up included, a few hundred calls). Both
# tools slow the server, so reads hold more lines than at full speed: the
# per-line syscall count is a lower bound. Outputs stay in
# ${PROFILE_DIR:-/tmp/threadlab-profile}/NAME.*; read them with
# callgrind_annotate NAME.300k.cg.
set -eu
[ $# -ge 2 ] || { echo "usage: bench/profile.sh NAME SERVER-COMMAND..." >&2; exit 2; }
name=$1; shift
case $name in *[!A-Za-z0-9._-]*) echo "profile: NAME is letters, digits, . _ -" >&2; exit 2 ;; esac
for tool in valgrind callgrind_annotate strace; do
  command -v $tool >/dev/null || { echo "profile: needs $tool" >&2; exit 2; }
done
BIN=${THREADLAB_BIN:-build/threadlab}
dir=${PROFILE_DIR:-/tmp/threadlab-profile}
mkdir -p "$dir"
out=$dir/$name
export THREADLAB_BOARD_DIR="$dir/boards"   # made 0700 by the server
server=""
trap '[ -n "$server" ] && kill -TERM $server 2>/dev/null; true' EXIT

# one LINES TOOL...: start TOOL SERVER-COMMAND PORT, load it, stop it.
one() {
  lines=$1; shift
  port=$(( 20000 + ($$ + lines) % 20000 ))
  "$@" $port >/dev/null 2>"$out.err" &
  server=$!
  for _ in $(seq 300); do
    ss -ltnH 2>/dev/null | grep -q "127.0.0.1:$port " && break; sleep 0.2
  done
  "$BIN" load "127.0.0.1:$port" --conns 64 --depth 16 --size 64 --lines "$lines" \
      --threads 1 --timeout 120 --json >"$out.json" || true
  # Stop the server itself: strace, told to stop, only detaches.
  child=$(cat "/proc/$server/task/$server/children" 2>/dev/null || true)
  kill -TERM ${child:-$server} 2>/dev/null || true
  wait $server 2>/dev/null || true
  server=""
  ok=$(sed -n 's/.*"lines_ok":\([0-9]*\).*/\1/p' "$out.json")
  [ "${ok:-0}" = "$lines" ] || { echo "profile: $name answered ${ok:-0} of $lines lines" >&2; exit 1; }
}
total_ir() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'; }

one 100000 valgrind --tool=callgrind --callgrind-out-file="$out.100k.cg" "$@"
one 300000 valgrind --tool=callgrind --callgrind-out-file="$out.300k.cg" "$@"
one 100000 strace -f -c -o "$out.strace" "$@"
ir=$(echo "$(total_ir "$out.100k.cg") $(total_ir "$out.300k.cg")" | awk '{printf "%.1f", ($2 - $1) / 200000}')
calls=$(awk '$NF == "total" {print $4}' "$out.strace" | tail -1)
writes=$(awk '$NF == "write" || $NF == "sendto" || $NF == "writev" || $NF == "sendmsg" {n += $4} END {print n + 0}' "$out.strace")
echo "$name: $ir user instructions/line; $(echo "$calls" | awk '{printf "%.3f", $1 / 100000}') syscalls/line, $(echo "$writes" | awk '{printf "%.3f", $1 / 100000}') of them writes"
echo "  top symbols (300k lines): callgrind_annotate $out.300k.cg | head -40"
