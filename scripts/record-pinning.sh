#!/bin/sh
# record-pinning.sh BIN OUT SECONDS -- the recording of vthread's blocking
# lesson (make recordings): two vthread servers under the same load, 1% of
# lines "!sleep 200", the first with the monitor's handoff (the default),
# the second with --pin, watched side by side by threadlab top --record
# for SECONDS. The caption under the panes says which is which. Loopback
# only; every process it starts is stopped on exit.
set -eu
BIN=$1 OUT=$2 SECONDS_=$3
tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
pids=""
trap 'for p in $pids; do kill -TERM $p 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# serve LABEL ARGS...: a vthread server on a free port, and its load; sets spid.
serve() {
  label=$1; shift
  "$BIN" serve vthread --carriers 2 "$@" --port 0 --port-file "$tmp/$label.port" >/dev/null 2>&1 &
  spid=$!
  pids="$pids $spid"
  for _ in $(seq 100); do [ -s "$tmp/$label.port" ] && break; sleep 0.1; done
  [ -s "$tmp/$label.port" ] || { echo "record-pinning: $label did not start" >&2; exit 1; }
  "$BIN" load "127.0.0.1:$(cat "$tmp/$label.port")" --conns 32 --mix sleep=200:1 \
      --duration "$((SECONDS_ + 5))" --timeout 10 --no-progress >/dev/null 2>&1 &
  pids="$pids $!"
}
serve handoff
handoff_pid=$spid
serve pinned --pin
pinned_pid=$spid
"$BIN" top --plain --count "$((SECONDS_ * 2))" --interval 500 --size 120x36 --record "$OUT" \
  --caption "[vthread --pin] 1% of lines sleep 200 ms. Pane 1, vthread: after 20 ms the monitor \
hands the stuck carrier to a spare thread (the log: handoff, retired) and its lines keep flowing. \
Pane 2, vthread --pin: the sleep holds its carrier (BLOCKED) and every virtual thread on it waits." \
  "$handoff_pid" "$pinned_pid" >/dev/null
