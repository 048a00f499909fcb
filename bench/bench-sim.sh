#!/usr/bin/env bash
# bench-sim.sh BIN [PROFILE] -- `make bench-sim`: each real model and its
# simulation under the same small workload on this machine, side by side
# (lines/s and p99, and their ratio), at 1, 16 and 64 connections, then
# the simulator's own speed. Without PROFILE it calibrates this machine
# first (threadlab calibrate) and simulates with that profile.
# The real runs share this machine's cores with their load generator; the
# simulations model that with --client-cpu on 2 cores.
# Target (issue 17): sim/real lines/s within 25% (0.75-1.25) and p99
# within 50% (0.5-1.5); a ratio outside is marked with '!'.
set -u
BIN=${1:-build/threadlab}
PROFILE=${2:-}
DURATION=${BENCH_SIM_DURATION:-3}
CONNS_LIST=${BENCH_SIM_CONNS:-1 16 64}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
export THREADLAB_BOARD_DIR="$tmp/boards"
num() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
if [ -z "$PROFILE" ]; then
  PROFILE="$tmp/here.profile"
  echo "bench-sim: calibrating this machine first (threadlab calibrate)"
  "$BIN" calibrate --out "$PROFILE" 2>"$tmp/cal.log"
  grep -E "too wide|refused" "$tmp/cal.log" | sed 's/^/  /'
fi
profile_args=(--profile "$PROFILE")

for CONNS in $CONNS_LIST; do
echo "bench-sim: $CONNS connections, closed loop, 64-byte lines, ${DURATION}s; profile: $PROFILE"
printf '%-13s %12s %12s %7s   %10s %10s %7s\n' model "real l/s" "sim l/s" ratio "real p99" "sim p99" ratio
for spec in "bio" "pool --max 64" "reactor" "multireactor"; do
  model=${spec%% *}
  rm -f "$tmp/port"
  # shellcheck disable=SC2086
  "$BIN" serve $spec --port 0 --port-file "$tmp/port" >/dev/null 2>&1 &
  spid=$!
  for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  "$BIN" load "127.0.0.1:$(cat "$tmp/port")" --conns "$CONNS" --duration "$DURATION" \
      --json >"$tmp/real.json" 2>/dev/null
  kill -INT "$spid"; wait "$spid" 2>/dev/null
  # shellcheck disable=SC2086
  "$BIN" sim $spec --cores 2 --client-cpu --conns "$CONNS" --duration "$DURATION" \
      "${profile_args[@]}" --json >"$tmp/sim.json"
  rl=$(num lines_per_s <"$tmp/real.json"); sl=$(num lines_per_s <"$tmp/sim.json")
  rp=$(num p99 <"$tmp/real.json"); sp=$(num p99 <"$tmp/sim.json")
  awk -v m="$model" -v rl="$rl" -v sl="$sl" -v rp="$rp" -v sp="$sp" 'BEGIN {
    lr = rl > 0 ? sl / rl : 0; pr = rp > 0 ? sp / rp : 0
    printf "%-13s %12.0f %12.0f %6.2f%s   %8.0fus %8.0fus %6.2f%s\n", m, rl, sl, lr,
           (lr < 0.75 || lr > 1.25) ? "!" : " ", rp, sp, pr, (pr < 0.5 || pr > 1.5) ? "!" : " " }'
done
echo
done
echo "The simulator's speed (one core, no allocation per event):"
"$BIN" sim multireactor --cores 16 \
    --conns 1000000 --lines-per-conn 10 --ramp 10 "${profile_args[@]}" --engine-stats 2>&1 \
    | grep -E '^  lines |^engine'
"$BIN" sim pool --profile zero --cores 1 \
    --min 1 --max 1 --queue 100000000 --conns 2000000 --lines-per-conn 1 --ramp 222 \
    --random-connects --service-exp 100 --engine-stats 2>&1 | grep -E '^engine'
