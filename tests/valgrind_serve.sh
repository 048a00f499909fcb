#!/bin/sh
# valgrind_serve.sh VALGRIND BIN -- every model under valgrind: serve, load,
# nc, a graceful stop; fails on any leak or memory error.
set -u
VALGRIND=$1 BIN=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export THREADLAB_BOARD_DIR="$tmp/boards"
status=0
for model in bio pool reactor multireactor vthread; do
  $VALGRIND "$BIN" serve "$model" --port 0 --port-file "$tmp/port" >"$tmp/vg.out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/port")
  "$BIN" load "127.0.0.1:$port" --conns 16 --depth 4 --lines 4000 --no-progress >/dev/null || status=1
  printf 'x\n!who\n!quit\n' | timeout 10 nc -q1 127.0.0.1 "$port" >/dev/null
  # The reader too: threadlab top reads the board twice.
  if ! $VALGRIND "$BIN" top --plain --count 2 --interval 100 "$pid" >"$tmp/top.out" 2>&1; then
    echo "valgrind: top failed"; cat "$tmp/top.out"; status=1
  fi
  kill -INT "$pid"
  wait "$pid"; rc=$?
  if [ "$rc" != 0 ]; then
    echo "valgrind: $model exited $rc"; cat "$tmp/vg.out"; status=1
  else
    echo "valgrind: $model clean"
  fi
  rm -f "$tmp/port"
done
exit $status
