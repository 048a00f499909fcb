#!/bin/sh
# run.sh -- `threadlab sim` and `threadlab calibrate` as a person uses
# them: help and bad input, a deterministic report, and --viz in a real
# terminal (tmux): a connection handed to a worker, pause, one step, quit.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
export THREADLAB_BOARD_DIR="$tmp/boards"
. "$(dirname "$0")/../lib.sh"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
screen() { tmux -S "$sock" capture-pane -p -t sim; }
status_line() { screen | grep '^\[sim '; }

echo "== tests/sim/run.sh ($BIN)"

# Help and bad input.
"$BIN" sim --help | grep -q "usage: threadlab sim MODEL" && ok || bad "sim --help"
"$BIN" calibrate --help | grep -q "usage: threadlab calibrate" && ok || bad "calibrate --help"
# In Chinese for a zh screen (--lang zh after --help, or a zh LANG), with
# every option the English help names: a new option must reach both.
opts() { grep -o -- '--[a-z][a-z-]*' | sort -u; }
"$BIN" sim --help | opts >"$tmp/help.en"
for how in "--lang zh" "LANG=zh_CN.UTF-8"; do
  case "$how" in
    --lang*) "$BIN" sim --help --lang zh >"$tmp/help.zh" ;;
    *) env -u LC_ALL -u LC_MESSAGES LANG=zh_CN.UTF-8 "$BIN" sim --help >"$tmp/help.zh" ;;
  esac
  # 80 columns of display width at most (a Chinese character takes two).
  grep -q "^用法：threadlab sim MODEL" "$tmp/help.zh" && opts <"$tmp/help.zh" | cmp -s - "$tmp/help.en" \
    && [ "$(LC_ALL=C.UTF-8 wc -L <"$tmp/help.zh")" -le 80 ] \
    && ok || { bad "sim --help ($how): not Chinese, wider than 80 columns, or not the English help's options"
               opts <"$tmp/help.zh" | diff "$tmp/help.en" - | head -5; }
done
LANG=C LC_ALL=C "$BIN" sim --help | grep -q "^usage: threadlab sim MODEL" && ok || bad "sim --help in English"
"$BIN" sim nosuch >"$tmp/out" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "no model called 'nosuch'" "$tmp/out" && ok || bad "sim nosuch: exit $st"
"$BIN" sim bio --cores 0 >"$tmp/out" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "cores" "$tmp/out" && ok || bad "sim --cores 0: exit $st"
printf 'read_ns = quick\n' >"$tmp/bad.profile"
"$BIN" sim bio --profile "$tmp/bad.profile" >"$tmp/out" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "line 1: not 'key = number'" "$tmp/out" && ok || bad "a bad profile: exit $st"

# Inputs that would make a run without end, or make no sense: one line
# that says why, exit 2 (docs/robustness.md, "The simulator").
refused() {  # refused WHAT PATTERN ARGS...: exit 2 and the pattern on stderr
  what=$1 pat=$2; shift 2
  timeout 20 "$BIN" sim "$@" >"$tmp/out" 2>"$tmp/err"; st=$?
  [ "$st" = 2 ] && grep -q "$pat" "$tmp/err" && ok || bad "$what: exit $st, $(head -1 "$tmp/err")"
}
refused "--rate 1e12 on one conn" "per connection" reactor --rate 1e12 --conns 1
refused "--mix cpu=100:nan" "mix" bio --mix cpu=100:nan
refused "--mix task=5:nan" "mix" reactor --mix task=5:nan
refused "--io-ratio 0" "io-ratio" reactor --io-ratio 0
"$BIN" sim reactor --conns 4 --duration 0.05 --mix task=100:20 --io-ratio 30 | grep -q "^  lines" \
  && ok || bad "sim --mix task= --io-ratio did not run"
refused "a directory as --profile" "Is a directory" bio --profile "$tmp"
: >"$tmp/empty.profile"
refused "an empty --profile" "not a profile" bio --profile "$tmp/empty.profile"
printf 'read_ns = nan\n' >"$tmp/nan.profile"
refused "a profile with nan" "not a finite number" bio --profile "$tmp/nan.profile"
printf 'stack_kb = 0\n' >"$tmp/stack0.profile"
refused "stack_kb = 0" "too small" bio --profile "$tmp/stack0.profile"
# The pool's sizes are capped as --workers and --offload are: --min
# threads are made at the start, and never past the machine's limit.
refused "--min 100000000" "min" pool --min 100000000 --max 100000000 --conns 100 -t 1
refused "--min past --max-threads" "max-threads" pool --min 500 --max 500 --max-threads 100 -t 1
refused "--workers 0" "workers" multireactor --workers 0
# A connection counts its lines in 32 bits: a run that could send more on
# one is refused, as is a closed loop whose lines take no time (the clock
# would never move).
refused "--lines-per-conn past 32 bits" "lines-per-conn" reactor --lines-per-conn 4294967296 -t 0.001
refused "--rate x --duration past 32 bits" "lines a connection" reactor --rate 1e6 -t 1e6
refused "--duration past 32 bits of lines" "4294967295" reactor -t 1e6
refused "lines that take no time" "never ends" reactor --profile zero

# Memory: a run whose start cannot fit is refused in one line (exit 2);
# one that runs out as it grows (BIO's two million threads, made at once
# with no costs) says so and exits 1. Both aborted with no word before.
# Not under a sanitizer, whose shadow memory ulimit -v would not leave room for.
if ! grep -qa "__asan_init\|__tsan_init" "$BIN"; then
  (ulimit -v 2560000; exec "$BIN" sim bio --conns 50000000 -t 1) >"$tmp/out" 2>"$tmp/err"; st=$?
  [ "$st" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "needs .* of memory .*ulimit -v" "$tmp/err" \
    && ok || bad "50000000 conns under ulimit -v 2560000: exit $st, $(head -1 "$tmp/err")"
  (ulimit -v 226000; exec "$BIN" sim bio --profile zero --conns 2000000 --max-threads 0 \
     --think-us 1000 -t 0.01) >"$tmp/out" 2>"$tmp/err"; st=$?
  [ "$st" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "out of memory after" "$tmp/err" \
    && ok || bad "running out of memory: exit $st, $(head -1 "$tmp/err")"
fi

# An option given is told from one not given by a flag, never by its
# value: --duration 10 (the default's value) with --lines-per-conn still
# stops the sending at 10 s.
"$BIN" sim reactor --conns 1 --lines-per-conn 100000 --think-us 1000 --duration 10 --json \
  >"$tmp/d.json"
grep -q '"window_s":10.000000,' "$tmp/d.json" && ! grep -q '"lines_sent":100000,' "$tmp/d.json" \
  && ok || bad "--duration 10 with --lines-per-conn was ignored: $(head -c 200 "$tmp/d.json")"

# The report, twice with one seed: the same bytes, text and JSON; the
# engine's wall time only on stderr, with --engine-stats.
"$BIN" sim bio --conns 50 --duration 0.5 >"$tmp/a.txt"
"$BIN" sim bio --conns 50 --duration 0.5 >"$tmp/b.txt"
cmp -s "$tmp/a.txt" "$tmp/b.txt" && ok || bad "the same seed gave different text reports"
"$BIN" sim bio --conns 50 --duration 0.5 --engine-stats >"$tmp/c.txt" 2>"$tmp/c.err"
cmp -s "$tmp/a.txt" "$tmp/c.txt" && grep -q "^engine: [0-9]* events in" "$tmp/c.err" && ok \
  || bad "--engine-stats changed the report or printed no engine line"
"$BIN" sim pool --cores 4 --conns 100 --duration 1 --mix sleep=5:2 --json >"$tmp/a.json"
"$BIN" sim pool --cores 4 --conns 100 --duration 1 --mix sleep=5:2 --json >"$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" && ok || bad "the same seed gave different reports"
grep -Eq '"lines_ok":[1-9][0-9]*,' "$tmp/a.json" && ok || bad "no lines in the report"
! grep -q '"waits_' "$tmp/a.json" && ok || bad "waits reported without --waits"

# --waits: each thread's turns on a core. One connection on one core: the
# loop and the load generator take turns, each woken onto the idle core
# (so it waits the built-in wakeup_ns, 7.05 us) and blocking once a line.
# Four BIO threads burning 5 ms a line on one core: each turn is cut by
# the 3 ms slice (preempted once a line, no turn longer than a slice), and
# a preempted thread waits for the three others' slices, 9 ms, counted
# from when it was put back (not from when its line woke it).
wnum() {  # wnum KIND FIELD [SUB]: a figure of "waits_KIND" in $tmp/w.json
  # KIND's object alone: from its name to its last field.
  grep -o "\"waits_$1\":{.*" "$tmp/w.json" |
    sed 's/"preempted_per_line":\([0-9.]*\)}.*/"preempted_per_line":\1/' >"$tmp/w.kind"
  if [ $# -gt 2 ]; then grep -o "\"$2\":{[^}]*}" "$tmp/w.kind" | grep -o "\"$3\":[0-9.]*"
  else grep -o "\"$2\":[0-9.]*" "$tmp/w.kind"; fi | head -1 | cut -d: -f2
}
"$BIN" sim reactor --cores 1 --client-cpu --conns 1 --duration 1 --waits --json >"$tmp/w.json"
awk -v b="$(wnum server blocked_per_line)" -v p="$(wnum server preempted_per_line)" \
    -v lb="$(wnum load blocked_per_line)" -v w="$(wnum server wait_us p50)" \
    -v lw="$(wnum load wait_us p50)" 'BEGIN {
  exit !(b >= 0.99 && b <= 1.01 && p == 0 && lb >= 0.99 && lb <= 1.01 &&
         w >= 6.5 && w <= 7.6 && lw >= 6.5 && lw <= 7.6) }' && ok ||
  bad "--waits, one connection on one core: $(tr -d '\n' <"$tmp/w.json" | grep -o '"waits_.*')"
"$BIN" sim bio --cores 1 --conns 4 --mix cpu=5000:100 --duration 1 --waits --json >"$tmp/w.json"
awk -v p="$(wnum server preempted_per_line)" -v w="$(wnum server wait_us p90)" \
    -v w99="$(wnum server wait_us p99)" -v r="$(wnum server run_us p99)" 'BEGIN {
  exit !(p >= 0.95 && p <= 1.05 && w >= 6000 && w99 <= 9600 && r <= 3100) }' && ok ||
  bad "--waits, BIO burning 5 ms a line on one core: $(grep -o '"waits_.*' "$tmp/w.json")"
"$BIN" sim reactor --cores 1 --client-cpu --conns 1 --duration 1 --waits |
  grep -q "^  waits    load generator: [0-9]* turns on a core; waited for it p50 " && ok ||
  bad "--waits: no load generator line in the text report"

# Lab 08's quiz: numbers from the seed, the same for one seed, and answers.
"$BIN" sim quiz --seed 7 >"$tmp/q7a"; "$BIN" sim quiz --seed 7 >"$tmp/q7b"
"$BIN" sim quiz --seed 8 >"$tmp/q8"
cmp -s "$tmp/q7a" "$tmp/q7b" && ok || bad "one seed gave two quizzes"
grep -q "^quiz 7: [0-9]* connections on a [0-9]*-core machine" "$tmp/q7a" && ok || bad "no quiz"
"$BIN" sim quiz --seed 7 --answers >"$tmp/qa"
n=$(grep -cE "^(bio|pool|reactor|multireactor) +[0-9]+ " "$tmp/qa")
[ "$n" = 4 ] && ok || bad "the quiz's answers have $n model rows, not 4"
"$BIN" sim quiz --nosuch >/dev/null 2>&1; [ $? = 2 ] && ok || bad "sim quiz --nosuch is not a usage error"

# A core that idled 100 us or more wakes late (wakeup_deep_*), and the
# late part stops at its p99.9 (1 ms here): one connection, a line every
# ms, so each wakeup is after a long idle. Past the p99.9 the tail of a
# call's cost would go on (6.8 ms in this run without the stop).
printf 'version = 7\nwakeup_deep_after_ns = 100000\nwakeup_deep_ns = 10000\nwakeup_deep_p99 = 10\nwakeup_deep_p999 = 100\n' \
  >"$tmp/deep.profile"
max=$("$BIN" sim reactor --profile "$tmp/deep.profile" --conns 1 --rate 1000 --duration 20 --json \
  | sed -n 's/.*"max":\([0-9.]*\)}.*/\1/p')
p99=$("$BIN" sim reactor --profile "$tmp/deep.profile" --conns 1 --rate 1000 --duration 20 --json \
  | sed -n 's/.*"p99":\([0-9.]*\).*/\1/p')
nodeep=$("$BIN" sim reactor --conns 1 --rate 1000 --duration 20 --json | sed -n 's/.*"p99":\([0-9.]*\).*/\1/p')
awk -v m="$max" -v p="$p99" -v n="$nodeep" 'BEGIN { exit !(m > 1000 && m < 1100 && p > n + 20) }' \
  && ok || bad "deep idle: max $max us (want 1000-1100), p99 $p99 us against $nodeep without it"

# An open loop's client on the machine (--client-cpu) sends when its timer
# wakes it, timer_late_ns late (30 us here): p50 30 us more than on
# time; a client off the machine (no --client-cpu) is on time.
printf 'version = 7\ntimer_late_ns = 0\n' >"$tmp/ontime.profile"
printf 'version = 7\ntimer_late_ns = 30000\ntimer_late_sigma = 0\ntimer_late_p99 = 0\ntimer_late_p999 = 0\n' \
  >"$tmp/timer.profile"
p50() { "$BIN" sim reactor "$@" --conns 1 --rate 1000 --duration 5 --json | sed -n 's/.*"p50":\([0-9.]*\).*/\1/p'; }
on=$(p50 --client-cpu --profile "$tmp/ontime.profile"); late=$(p50 --client-cpu --profile "$tmp/timer.profile")
off=$(p50 --profile "$tmp/ontime.profile"); offlate=$(p50 --profile "$tmp/timer.profile")
awk -v a="$on" -v b="$late" -v c="$off" -v d="$offlate" 'BEGIN { exit !(b - a >= 25 && b - a <= 35 && c == d) }' \
  && ok || bad "timer_late: p50 $on -> $late us with --client-cpu, $off -> $offlate without"

# A profile written by calibrate is read back by sim.
# On a busy machine some figures spread too wide to trust: calibrate then
# keeps their built-in values, says which, and exits 1 (not a failure here).
"$BIN" calibrate --out "$tmp/here.profile" 2>"$tmp/cal.log"; st=$?
{ [ "$st" = 0 ] || { [ "$st" = 1 ] && grep -q "keeping the value it had" "$tmp/cal.log"; }; } \
  && grep -q "^wakeup_ns = [0-9]" "$tmp/here.profile" && grep -q "^wakeup_cpu_ns = [0-9]" "$tmp/here.profile" \
  && grep -q "^wakeup_granularity_ns = [0-9]" "$tmp/here.profile" \
  && grep -q "^# spread wakeup_granularity_ns [0-9]*: \(read from /\|not shown by this kernel\)" \
       "$tmp/here.profile" \
  && grep -q "^version = 7$" "$tmp/here.profile" && grep -q "^wakeup_ipi_ns = [0-9]" "$tmp/here.profile" \
  && grep -q "^wakeup_deep_after_ns = 100000$" "$tmp/here.profile" \
  && grep -q "^# spread vt_switch_ns [0-9.]*: calls p10" "$tmp/here.profile" \
  && grep -q "^vt_stack_touched_kb = [0-9]" "$tmp/here.profile" \
  && grep -q "^# spread migration_cost_ns [0-9]*: \(read from /\|not shown by this kernel\)" "$tmp/here.profile" \
  && grep -q "^# spread write_ns [0-9.]*: calls p10 [0-9]* p50 [0-9]* p90 [0-9]*; rounds within [0-9.]*%$" \
       "$tmp/here.profile" && ok \
  || { bad "calibrate: exit $st"; cat "$tmp/cal.log"; }
"$BIN" sim reactor --conns 10 --duration 0.5 --profile "$tmp/here.profile" | grep -q "lines " \
  && ok || bad "sim could not use calibrate's profile"
# --only measures one group over --base: the other figures are the base's,
# to the digit; a group that is not one, or a damaged base, is refused.
printf 'version = 4\nread_ns = 1234.5\nwrite_ns = 6789\naccept_ns = 42\n' >"$tmp/base.profile"
"$BIN" calibrate --only handle --base "$tmp/base.profile" --out "$tmp/only.profile" 2>/dev/null
grep -q "^read_ns = 1234.500$" "$tmp/only.profile" && grep -q "^accept_ns = 42$" "$tmp/only.profile" \
  && grep -q "^# spread handle_ns" "$tmp/only.profile" && ! grep -q "^# spread read_ns" "$tmp/only.profile" \
  && ok || bad "calibrate --only handle --base changed other figures or measured none"
"$BIN" calibrate --only handle,nosuch --out "$tmp/x.profile" 2>"$tmp/err"; st=$?
[ "$st" = 2 ] && grep -q "'nosuch' is not a group" "$tmp/err" && [ ! -e "$tmp/x.profile" ] \
  && ok || bad "calibrate --only nosuch: exit $st"
printf 'read_ns = nan\n' >"$tmp/bad.profile"
"$BIN" calibrate --only handle --base "$tmp/bad.profile" --out "$tmp/x.profile" 2>"$tmp/err"; st=$?
[ "$st" = 2 ] && grep -q "not a finite number" "$tmp/err" && [ ! -e "$tmp/x.profile" ] \
  && ok || bad "calibrate --base with a damaged profile: exit $st"

# --viz on a terminal: the boss hands conn 1 to worker 1; pause, step, quit.
command -v tmux >/dev/null || { echo "  FAIL: tmux is not installed"; exit 1; }
tmux -S "$sock" new-session -d -s sim -x 160 -y 45 \
  "env TERM=xterm-256color THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR \
   $BIN sim multireactor --cores 4 --conns 4 --duration 0.05 --viz --speed 0.0002; \
   echo exit=\$?; sleep 30"
seen=""
for _ in $(seq 60); do
  sleep 0.1
  if screen | grep -q "assign  conn 1 -> worker-1: round robin (1 of 8)"; then seen=yes; break; fi
done
[ -n "$seen" ] && ok || { bad "--viz never showed conn 1 handed to worker-1"; screen | head -40; }
screen | grep -Eq "^ sim:mreactor  pid [0-9]+" && ok || bad "no pane for the simulated server"
tmux -S "$sock" send-keys -t sim ' '
for _ in $(seq 100); do status_line | grep -q PAUSED && break; sleep 0.1; done
sleep 0.3                  # an event drawn after the pause was read
before=$(status_line | sed -n 's/.*event \([0-9]*\).*/\1/p')
status_line | grep -q PAUSED && ok || bad "space did not pause: $(status_line)"
tmux -S "$sock" send-keys -t sim s
# The screen is drawn when the key is read: on a loaded machine that may
# take a while, so each check waits (up to 10 s) for what it expects.
for _ in $(seq 100); do
  after=$(status_line | sed -n 's/.*event \([0-9]*\).*/\1/p')
  [ -n "$after" ] && [ "$after" != "$before" ] && break
  sleep 0.1
done
[ -n "$before" ] && [ "$after" = $((before + 1)) ] && ok \
  || bad "s did not run exactly one event ($before -> $after)"
# paused_status: the status line without its speed, once it is not what
# $1 was (or after 10 s).
paused_status() {
  for _ in $(seq 100); do
    line=$(status_line | sed 's/speed [^ ]*//')
    [ "$line" != "$1" ] && break
    sleep 0.1
  done
  echo "$line"
}
# wait_status: the same, until it is $1 (or after 10 s).
wait_status() {
  for _ in $(seq 100); do
    line=$(status_line | sed 's/speed [^ ]*//')
    [ "$line" = "$1" ] && break
    sleep 0.1
  done
  echo "$line"
}
# b steps back exactly: the run is made again from the seed to just before
# the last event; stepping on again gives the same event.
line_a=$(status_line | sed 's/speed [^ ]*//')
tmux -S "$sock" send-keys -t sim s
line_b=$(paused_status "$line_a")
tmux -S "$sock" send-keys -t sim b
now=$(wait_status "$line_a")
[ "$now" = "$line_a" ] && ok || bad "b did not return to the event before: $now vs $line_a"
tmux -S "$sock" send-keys -t sim s
now=$(wait_status "$line_b")
[ "$now" = "$line_b" ] && ok || bad "s after b did not give the same event again: $now vs $line_b"

# ? lists the simulator's own keys (not top's help), and ? again hides them.
keys="keys: space pause/resume, s one event on, b one event back"
tmux -S "$sock" send-keys -t sim '?'
for _ in $(seq 100); do status_line | grep -q "$keys" && break; sleep 0.1; done
status_line | grep -q "$keys" && ok || bad "? did not list the sim's keys: $(status_line)"
tmux -S "$sock" send-keys -t sim '?'
for _ in $(seq 100); do status_line | grep -q "event [0-9]" && break; sleep 0.1; done
status_line | grep -q "event [0-9]" && ok || bad "? again did not bring the status back"
tmux -S "$sock" send-keys -t sim q
# The report is printed on the terminal once the full screen is gone.
for _ in $(seq 50); do screen >"$tmp/report"; grep -q "^exit=" "$tmp/report" && break; sleep 0.1; done
grep -q "^exit=0" "$tmp/report" && grep -q "^sim multireactor: 4 cores, 4 conns" "$tmp/report" \
  && ok || { bad "q did not end --viz with the report"; cat "$tmp/report"; }
n=$(ls "$THREADLAB_BOARD_DIR" 2>/dev/null | wc -l)
[ "$n" = 0 ] && ok || bad "--viz left $n board file(s)"

# --speed and --big mean nothing without --viz: refused, not ignored.
for opt in "--speed 0.5" --big; do
  "$BIN" sim reactor --conns 2 --duration 0.0005 $opt >"$tmp/noviz" 2>&1; st=$?
  [ "$st" = 2 ] && grep -q -- "${opt%% *} goes with --viz" "$tmp/noviz" && ok \
    || { bad "sim $opt without --viz: exit $st"; cat "$tmp/noviz"; }
done

# --viz without a terminal: plain snapshots until the run ends, then the report.
timeout 60 "$BIN" sim reactor --conns 2 --duration 0.0005 --viz --speed 0.001 >"$tmp/plain" 2>&1
st=$?
[ "$st" = 0 ] && grep -q "^--- threadlab top" "$tmp/plain" && grep -q "^sim reactor:" "$tmp/plain" \
  && ok || { bad "plain --viz: exit $st"; tail -5 "$tmp/plain"; }
# The loop's thread counts the lines it answered, and its io/task split
# moves; its CPU% is "-" (a simulated thread has no task in /proc).
grep -Eq "^ reactor +[A-Za-z.] [a-z-]+ +[0-9.]+[a-z]+ +- +- +[1-9][0-9]*$" "$tmp/plain" && ok \
  || { bad "--viz: the reactor thread's LINES stayed 0"; grep -A1 THREAD "$tmp/plain" | tail -2; }
grep -Eq "^ reactor +[0-9]+ .* ([1-9][0-9]*/[0-9]+|[0-9]+/[1-9][0-9]*) +(wait|io|tasks)" \
  "$tmp/plain" && ok \
  || { bad "--viz: the loop's IO/TASK stayed 0/0"; grep -A1 "^ LOOP" "$tmp/plain" | tail -2; }
# --lang zh: the status line says the run's place and its next event in
# Chinese (the event's words from the viewer's reason table).
timeout 60 "$BIN" sim reactor --conns 2 --duration 0.0005 --viz --speed 0.001 --lang zh \
  >"$tmp/plain-zh" 2>&1
grep -Eq "^\[模拟 reactor\] t=[0-9.]+s  第 [0-9]+ 个事件  速度 [0-9.]+x  (已结束|下一个：(连接|核|客户端|第))" \
  "$tmp/plain-zh" && ! grep -q "next: \|reaches the server" "$tmp/plain-zh" && ok \
  || { bad "--viz --lang zh: the status line is not Chinese"; grep "sim\|模拟" "$tmp/plain-zh" | head -3; }
# ... and the kind of event `e` steps to, in Chinese too (回复, not reply).
grep -q "e 下一个 回复" "$tmp/plain-zh" && ! grep -Eq "e 下一个 [a-z]" "$tmp/plain-zh" && ok \
  || { bad "--viz --lang zh: e's event kind is not Chinese"; grep -o "e 下一个 [^，]*" "$tmp/plain-zh" | head -2; }
# A simulated thread's FOR is simulated time too: a run of 0.5 ms cannot
# show a thread in its state for minutes or hours (threads that began
# before the first event were once dated 0: a FOR of the machine's uptime).
# (A multireactor's idle workers never change state: they show it.)
timeout 60 "$BIN" sim multireactor --cores 4 --conns 4 --duration 0.0005 --viz --speed 0.001 \
  >"$tmp/plain-m" 2>&1
if ! grep -q "^ worker-8 " "$tmp/plain-m"; then
  bad "--viz: no idle worker-8 in the multireactor's list"; tail -5 "$tmp/plain-m"
elif grep -Eq "^ [a-z0-9-]+ +[A-Za-z.] [a-z-]+ +[0-9]+(m|h)[0-9]" "$tmp/plain-m"; then
  bad "--viz: a simulated thread's FOR is in minutes or hours"
  grep -E "^ [a-z0-9-]+ +[A-Za-z.] [a-z-]+ +[0-9]+(m|h)[0-9]" "$tmp/plain-m" | head -3
else ok; fi

summary sim
