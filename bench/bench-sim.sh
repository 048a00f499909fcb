#!/usr/bin/env bash
# bench-sim.sh BIN [PROFILE] -- `make bench-sim`: each real model (bio,
# pool, reactor, multireactor, vthread) and its simulation under the same
# small workload on this machine, side by side (lines/s and p99, and
# their ratio), then the simulator's own speed. Without PROFILE it
# calibrates this machine first (threadlab calibrate, into
# build/bench-sim.profile) and simulates with that profile.
#
# The cells: at each connection count (BENCH_SIM_CONNS, default 1 16 64)
# each model in closed loop (every connection sends its next line when
# the reply to the last one is in), then, at every count but 1, in open
# loop (`--rate R` on both sides: lines due on a clock whatever the
# replies do, latency counted from when each was due) at R = 50% and 90%
# (BENCH_SIM_RATES, '' for none) of the lines/s the real model answered
# in its closed-loop cell just before: well below and near the most this
# machine answered at that count, the load generator sharing its cores.
# At 1 connection the closed loop waits out every round trip with the
# cores half idle, so its rate is no ceiling and gets no open-loop cells.
# Latency against load is what classes draw, so p99 is the figure that
# matters in the open-loop cells (their lines/s is the rate asked for,
# unless a side falls behind).
#
# The real runs share this machine's cores with their load generator; the
# simulations model that with --client-cpu on 2 cores. Each real figure
# is the median of BENCH_SIM_REPEATS runs (default 3) of
# BENCH_SIM_DURATION seconds (default 2): other processes on the machine
# move single runs by a factor of several. The load average is printed
# beside each cell: a busy machine's real figures say as much about the
# others' work as about the model. The CPU each line costs (server and
# load generator together, from /proc and getrusage; in the simulation,
# busy core time over lines) is printed too: other processes take cores
# away, but hardly change what a line costs once it runs, so that ratio
# checks the cost model even on a busy machine. So is the steal time the
# kernel counted during the real runs (/proc/stat: the host running
# something else on our vCPUs), as a share of both cores: on 2026-12-02
# a 1-connection run with 20% stolen answered 8.0 k lines/s and one with 4% stolen
# 11.7 k, a minute apart.
# Costs that the machine's state moves (a wakeup across cores, a write
# to another core) drift on this VM: write_ns went 4.5, 7.0, 4.9, 7.4,
# 4.6 us in calibrations two seconds apart. So each real run is paired
# with simulations whose costs calibrate measured (--only
# switches,syscalls, over the profile; in open loop idle too, the late
# wakeup of a core that idled long, which drifts the most) just before
# that run, and a cell compares the median of the real runs with the
# median of their simulations.
# Each run is simulated with both schedulers, --sched linux and --sched
# simple (BENCH_SIM_SCHED, default "linux simple"), against the same real
# runs: a cell prints the real row, then one row per scheduler with its
# ratios and verdict, and the run ends with how many cells each scheduler
# has within the target.
# The target: sim/real lines/s within 15% (0.85-1.15) and p99 within 25%
# (0.75-1.25), in every cell; a ratio outside is marked with '!'.
# How long: 35 cells by default (15 closed, 20 open) of 3 real runs,
# each run 2 s of load after 3 s of calibrate --only (in open loop 5 s
# more, the idle group; up to three times that when a figure is measured
# again), with the server's start and stop and its two simulations (well
# under a second): the 20 cells at 1 and 16 connections took 18 minutes
# here, so about 30 minutes in all. BENCH_SIM_CONNS, BENCH_SIM_RATES,
# BENCH_SIM_SCHED, BENCH_SIM_REPEATS and BENCH_SIM_DURATION narrow it.
set -u
BIN=${1:-build/threadlab}
PROFILE=${2:-}
DURATION=${BENCH_SIM_DURATION:-2}
REPEATS=${BENCH_SIM_REPEATS:-3}
CONNS_LIST=${BENCH_SIM_CONNS:-1 16 64}
RATES=${BENCH_SIM_RATES-50 90}
SCHEDS=${BENCH_SIM_SCHED:-linux simple}
MODELS=("bio" "pool --max 64" "reactor" "multireactor" "vthread")
for s in $SCHEDS; do
  case $s in linux|simple) ;;
    *) echo "bench-sim: BENCH_SIM_SCHED: '$s' is not a scheduler (linux, simple)" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
export THREADLAB_BOARD_DIR="$tmp/boards"
num() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
load1() { cut -d' ' -f1 /proc/loadavg; }
if [ -z "$PROFILE" ]; then
  PROFILE="$(dirname "$BIN")/bench-sim.profile"
  echo "bench-sim: calibrating this machine first (threadlab calibrate --out $PROFILE;" \
       "load average $(load1))"
  "$BIN" calibrate --out "$PROFILE" 2>"$tmp/cal.log"
  grep -E "figure\(s\) refused" "$tmp/cal.log" | sed 's/^/  /'
fi

# A process's CPU so far, in clock ticks (utime + stime of /proc/PID/stat).
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# The machine's steal and total time so far, in clock ticks ("cpu" of /proc/stat).
steal() { awk '$1 == "cpu" { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t; exit }' /proc/stat; }

# One real run of "serve $1" under `load --conns $2` (and --rate $3 when
# it is above 0): "lines/s p99 us/line steal%", the CPU of server and
# load over the lines they answered, and the share of both cores' time
# the host stole meanwhile.
real_run() {
  local rate_opt=()
  [ "$3" -gt 0 ] && rate_opt=(--rate "$3")
  rm -f "$tmp/port"
  # shellcheck disable=SC2086
  "$BIN" serve $1 --port 0 --port-file "$tmp/port" >/dev/null 2>&1 &
  local spid=$!
  for _ in $(seq 300); do [ -s "$tmp/port" ] && break; sleep 0.1; done
  local t0; t0=$(ticks "$spid")
  local s0; s0=$(steal)
  /usr/bin/time -f "%U %S" -o "$tmp/load.time" "$BIN" load "127.0.0.1:$(cat "$tmp/port")" \
      --conns "$2" "${rate_opt[@]}" --duration "$DURATION" --json >"$tmp/real.json" 2>/dev/null
  local t1; t1=$(ticks "$spid")
  local s1; s1=$(steal)
  kill -INT "$spid"; wait "$spid" 2>/dev/null
  awk -v l="$(num lines_per_s <"$tmp/real.json")" -v p="$(num p99 <"$tmp/real.json")" \
      -v n="$(num lines_ok <"$tmp/real.json")" -v st=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
      -v lt="$(cat "$tmp/load.time")" -v s0="$s0" -v s1="$s1" 'BEGIN { split(lt, u, " ")
    split(s0, a, " "); split(s1, b, " ")
    printf "%s %s %.2f %.1f\n", l + 0, p + 0, (n > 0 ? (st / hz + u[1] + u[2]) * 1e6 / n : 0),
           (b[2] > a[2] ? 100 * (b[1] - a[1]) / (b[2] - a[2]) : 0) }'
}

# One simulation of "sim $1" with --sched $2, --conns $3 (and --rate $4
# when above 0) on the costs in $tmp/row.profile: "lines/s p99 us/line";
# nothing if the simulator refuses the run (its first line of complaint
# goes to $tmp/simerr.$2).
sim_run() {
  local rate_opt=()
  [ "$4" -gt 0 ] && rate_opt=(--rate "$4")
  # shellcheck disable=SC2086
  if ! "$BIN" sim $1 --sched "$2" --cores 2 --client-cpu --conns "$3" "${rate_opt[@]}" \
      --duration "$DURATION" --profile "$tmp/row.profile" --json >"$tmp/sim.json" \
      2>"$tmp/sim.err"; then
    head -n 1 "$tmp/sim.err" | sed "s|$tmp/row.profile|this run's profile|" >>"$tmp/simerr.$2"
    return
  fi
  awk -v l="$(num lines_per_s <"$tmp/sim.json")" -v p="$(num p99 <"$tmp/sim.json")" \
      -v b="$(num cpu_busy_pct <"$tmp/sim.json")" -v w="$(num window_s <"$tmp/sim.json")" \
      -v n="$(num window_lines <"$tmp/sim.json")" 'BEGIN {
    printf "%s %s %.2f\n", l + 0, p + 0, (n > 0 ? b / 100 * 2 * w * 1e6 / n : 0) }'
}

# A latency in microseconds, printed in the unit that suits it.
FMT_US='function us(v) {
  if (v < 10000) return sprintf("%.0fus", v)
  return v < 1e7 ? sprintf("%.1fms", v / 1e3) : sprintf("%.2fs", v / 1e6) }'
ROW='%-12s %-12s %-6s %8s %7s %9s %7s %9s %6s  %-11s %5s  %s\n'

# One cell: model spec $1 at $2 connections, closed loop ($3 = 0) or open
# loop at $3 lines/s, labelled $4. Prints the real row and one row per
# scheduler, counts each scheduler's verdict, and leaves the real
# median lines/s in $tmp/real_ls.
declare -A met=() total=()
cell() {
  local spec=$1 conns=$2 rate=$3 label=$4 model=${1%% *} la s groups=switches,syscalls
  # In open loop the cores idle between lines, and a core that idled
  # long wakes late (calibrate's idle group): measured again too.
  [ "$rate" -gt 0 ] && groups=switches,syscalls,idle
  la=$(load1)
  : >"$tmp/runs"; : >"$tmp/refused"
  for s in $SCHEDS; do : >"$tmp/sims.$s"; : >"$tmp/simerr.$s"; done
  for _ in $(seq "$REPEATS"); do
    # This repeat's costs, measured just before its real run, and its
    # simulations with them.
    "$BIN" calibrate --only "$groups" --base "$PROFILE" --out "$tmp/row.profile" \
        2>"$tmp/row.log" || grep -E "too wide|do not add|not above|a profile takes" "$tmp/row.log" |
        awk '{ print $1 }' >>"$tmp/refused"
    real_run "$spec" "$conns" "$rate" >>"$tmp/runs"
    for s in $SCHEDS; do sim_run "$spec" "$s" "$conns" "$rate" >>"$tmp/sims.$s"; done
  done
  local rl rp rc rs
  rl=$(cut -d' ' -f1 "$tmp/runs" | median); rp=$(cut -d' ' -f2 "$tmp/runs" | median)
  rc=$(cut -d' ' -f3 "$tmp/runs" | median); rs=$(cut -d' ' -f4 "$tmp/runs" | median)
  echo "$rl" >"$tmp/real_ls"
  la="$la-$(load1)"
  awk -v m="$model" -v c="$label" -v rl="$rl" -v rp="$rp" -v rc="$rc" -v la="$la" -v rs="$rs" \
      -v row="$ROW" "$FMT_US"' BEGIN {
    line = sprintf(row, m, c, "real", sprintf("%.0f", rl), "", us(rp), "", sprintf("%.1fus", rc), "",
                   la, sprintf("%.1f%%", rs), "")
    sub(/ +\n$/, "\n", line); printf "%s", line }'
  local kind=open
  [ "$rate" -gt 0 ] || kind=closed
  for s in $SCHEDS; do
    if [ ! -s "$tmp/sims.$s" ]; then
      printf '%-25s %-6s %s\n' "" "$s" "MISS: no simulation ($(head -n 1 "$tmp/simerr.$s"))"
      total[$s.$kind]=$((${total[$s.$kind]:-0} + 1))
      continue
    fi
    awk -v s="$s" -v rl="$rl" -v rp="$rp" -v rc="$rc" -v row="$ROW" \
        -v sl="$(cut -d' ' -f1 "$tmp/sims.$s" | median)" \
        -v sp="$(cut -d' ' -f2 "$tmp/sims.$s" | median)" \
        -v sc="$(cut -d' ' -f3 "$tmp/sims.$s" | median)" "$FMT_US"' BEGIN {
      # The ratios as printed (two decimals) are the ones judged.
      lr = sprintf("%.2f", rl > 0 ? sl / rl : 0); pr = sprintf("%.2f", rp > 0 ? sp / rp : 0)
      cr = sprintf("%.2f", rc > 0 ? sc / rc : 0)
      lok = lr >= 0.85 && lr <= 1.15; pok = pr >= 0.75 && pr <= 1.25
      verdict = lok && pok ? "within" : !lok && !pok ? "MISS l/s+p99" : !lok ? "MISS l/s" : "MISS p99"
      printf row, "", "", s, sprintf("%.0f", sl), lr (lok ? " " : "!"), us(sp), pr (pok ? " " : "!"),
             sprintf("%.1fus", sc), cr " ", "", "", verdict
      exit !(lok && pok) }' && met[$s.$kind]=$((${met[$s.$kind]:-0} + 1))
    total[$s.$kind]=$((${total[$s.$kind]:-0} + 1))
  done
  for s in $SCHEDS; do
    [ -s "$tmp/simerr.$s" ] && [ -s "$tmp/sims.$s" ] &&
      echo "  ($s: $(wc -l <"$tmp/simerr.$s") of $REPEATS simulations refused, the median is of the" \
           "others: $(head -n 1 "$tmp/simerr.$s"))"
  done
  if [ -s "$tmp/refused" ]; then
    echo "  (refused in these calibrations, so kept from the profile:" \
         "$(sort "$tmp/refused" | uniq -c | awk '{ printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1 }'))"
  fi
}

for CONNS in $CONNS_LIST; do
  open=""
  if [ "$CONNS" -gt 1 ] && [ -n "$RATES" ]; then
    for pct in $RATES; do open="$open${open:+, }$pct%"; done
    case $open in *", "*) open="${open%, *} and ${open##*, }" ;; esac
    open=", then open loop at $open of its real closed-loop lines/s"
  fi
  echo "bench-sim: $CONNS connection(s), 64-byte lines; each model in closed loop$open"
  echo "  real: the median of $REPEATS runs of ${DURATION}s; sim: the median of their simulations (--cores 2" \
       "--client-cpu),"
  echo "  each on the costs calibrate --only switches,syscalls (open loop: and idle) measured just before" \
       "its run, over $PROFILE"
  # shellcheck disable=SC2059
  printf "$ROW" model loop run "lines/s" ratio p99 ratio CPU/line ratio "load avg" steal verdict
  for spec in "${MODELS[@]}"; do
    cell "$spec" "$CONNS" 0 closed
    closed_ls=$(cat "$tmp/real_ls")
    [ "$CONNS" -gt 1 ] || continue
    for pct in $RATES; do
      rate=$(awk -v l="$closed_ls" -v p="$pct" 'BEGIN { printf "%.0f", l * p / 100 }')
      if [ "$rate" -gt 0 ]; then
        cell "$spec" "$CONNS" "$rate" "$pct% ${rate}/s"
      else
        echo "  (no open-loop cell at $pct%: the real closed loop answered nothing)"
      fi
    done
  done
  echo
done
echo "bench-sim: cells within the target (lines/s within 15%, p99 within 25%), by the simulation's scheduler:"
verdicts=""
for s in $SCHEDS; do
  m=$((${met[$s.closed]:-0} + ${met[$s.open]:-0})); t=$((${total[$s.closed]:-0} + ${total[$s.open]:-0}))
  printf '  --sched %-7s %3d of %d   (closed loop %d of %d, open loop %d of %d)\n' "$s" "$m" "$t" \
         "${met[$s.closed]:-0}" "${total[$s.closed]:-0}" "${met[$s.open]:-0}" "${total[$s.open]:-0}"
  if [ "$m" -eq "$t" ]; then
    verdicts+="bench-sim: --sched $s: target met in this run (all $t cells within)"$'\n'
  else
    verdicts+="bench-sim: --sched $s: target not met in this run: $((t - m)) cell(s) marked MISS above"$'\n'
  fi
done
printf '%s' "$verdicts"
echo
echo "The simulator's speed (one core, no allocation per event):"
"$BIN" sim multireactor --cores 16 \
    --conns 1000000 --lines-per-conn 10 --ramp 10 --profile "$PROFILE" --engine-stats 2>&1 \
    | grep -E '^  lines |^engine'
"$BIN" sim pool --profile zero --cores 1 \
    --min 1 --max 1 --queue 100000000 --conns 2000000 --lines-per-conn 1 --ramp 222 \
    --random-connects --service-exp 100 --engine-stats 2>&1 | grep -E '^engine'
