#!/usr/bin/env bash
# soak.sh BIN [SECONDS_PER_MODEL] -- `make soak`: every model under mixed
# load and faults for a while (default 150 s each, 10 minutes in all):
# verified echo load with !cpu/!sleep lines, oversized lines, resets
# mid-line, clients that never read, visualizers that come and go. Samples
# RSS, fds and threads every 10 s; fails if they keep growing or if any
# echoed byte was wrong.
set -u
BIN=${1:-build/threadlab}
SECONDS_PER_MODEL=${2:-150}
tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
status=0
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

sample() {
  local pid=$1
  local rss fds thr
  rss=$(awk '/^VmRSS:/ {print $2}' /proc/"$pid"/status 2>/dev/null)
  fds=$(ls /proc/"$pid"/fd 2>/dev/null | wc -l)
  thr=$(ls /proc/"$pid"/task 2>/dev/null | wc -l)
  echo "$rss $fds $thr"
}

faults() {   # faults PORT UNTIL: one fault every half second, in turn
  local port=$1 until=$2 k=0
  while [ "$(date +%s)" -lt "$until" ]; do
    case $((k % 4)) in
      0) head -c 70000 /dev/zero | tr '\0' 'x' | timeout 3 socat -t 1 - TCP:127.0.0.1:"$port" >/dev/null 2>&1 ;;
      1) printf 'half a line' | timeout 3 socat -u - TCP:127.0.0.1:"$port",linger=0 >/dev/null 2>&1 ;;
      2) yes 0123456789abcdef | head -c 8000000 | timeout 6 socat -u - TCP:127.0.0.1:"$port" >/dev/null 2>&1 & ;;
      3) timeout 2 "$BIN" top --plain --count 2 --interval 200 >/dev/null 2>&1 & ;;
    esac
    k=$((k + 1))
    sleep 0.5
  done
  wait
}

echo "threadlab soak: ${SECONDS_PER_MODEL}s per model; columns: seconds, RSS KiB, fds, threads"
for spec in "bio" "pool --min 4 --max 128" "reactor --offload 2" "multireactor --offload 2"; do
  model=${spec%% *}
  rm -f "$tmp/port"
  # shellcheck disable=SC2086
  "$BIN" serve $spec --port 0 --port-file "$tmp/port" --idle-timeout 10000 \
      --line-timeout 5000 --stall-timeout 2000 --max-conns 1000 >"$tmp/$model.log" 2>&1 &
  spid=$!
  for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/port")
  until=$(( $(date +%s) + SECONDS_PER_MODEL ))
  "$BIN" load "127.0.0.1:$port" --conns 40 --depth 4 --mix cpu=100:2,sleep=2:1 \
      --duration "$SECONDS_PER_MODEL" --threads 2 --timeout 30 --json >"$tmp/load.json" 2>&1 &
  lpid=$!
  faults "$port" "$until" &
  fpid=$!
  echo "== $spec"
  first="" samples=()
  for ((t = 10; t <= SECONDS_PER_MODEL; t += 10)); do
    sleep 10
    s=$(sample "$spid"); samples+=("$s")
    printf '  %4ds  %s\n' "$t" "$s"
  done
  wait "$lpid"; wait "$fpid" 2>/dev/null
  sleep 3                       # stalled clients get closed, threads reaped
  end=$(sample "$spid")
  printf '  after  %s\n' "$end"
  errors=$(sed -n 's/.*"errors_total":\([0-9]*\).*/\1/p' "$tmp/load.json")
  lines=$(sed -n 's/.*"lines_ok":\([0-9]*\).*/\1/p' "$tmp/load.json")
  echo "  load: $lines lines verified, $errors errors"
  [ "${errors:-1}" = 0 ] || { echo "  FAIL: the load saw errors"; status=1; }
  # Flat: RSS in the last third within 20% of the middle; fds and threads
  # back near where they were at the first sample.
  n=${#samples[@]}
  read -r mid_rss _ _ <<<"${samples[$((n / 3))]}"
  read -r last_rss _ _ <<<"${samples[$((n - 1))]}"
  read -r _ first_fds first_thr <<<"${samples[0]}"
  read -r _ end_fds end_thr <<<"$end"
  if [ "$last_rss" -gt $((mid_rss * 12 / 10 + 2048)) ]; then
    echo "  FAIL: RSS grew from $mid_rss to $last_rss KiB"; status=1
  fi
  if [ "$end_fds" -gt $((first_fds + 5)) ] && [ "$model" != bio ] && [ "$model" != pool ]; then
    echo "  FAIL: fds did not come back ($first_fds -> $end_fds)"; status=1
  fi
  # The board's counters against the load generator's: a verified run of
  # known size, with nothing else connected, must move them by exactly
  # that much; and nothing may be left open.
  counter() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$2"; }
  "$BIN" top --json --count 1 --interval 100 "$spid" >"$tmp/board0.json" 2>&1
  "$BIN" load "127.0.0.1:$port" --conns 10 --lines 5000 --timeout 30 --json >"$tmp/check.json" 2>&1
  "$BIN" top --json --count 1 --interval 100 "$spid" >"$tmp/board1.json" 2>&1
  d_lines=$(( $(counter lines "$tmp/board1.json") - $(counter lines "$tmp/board0.json") ))
  d_acc=$(( $(counter accepted "$tmp/board1.json") - $(counter accepted "$tmp/board0.json") ))
  active=$(counter active "$tmp/board1.json")
  echo "  board: +$d_lines lines, +$d_acc connections for a load of 5000 lines on 10; $active open"
  if [ "$d_lines" != 5000 ] || [ "$d_acc" != 10 ] || [ "$(counter errors_total "$tmp/check.json")" != 0 ]; then
    echo "  FAIL: the board's counters disagree with the load generator"; status=1
  fi
  kill -INT "$spid"; wait "$spid"
done
exit $status
