#!/bin/sh
# run.sh -- `threadlab demo` on a real terminal (tmux) and `threadlab
# compare` as a person runs them: five panes with their names (a 3x2 grid
# at 120 columns, 2x3 at 160x48), the reactor's blocked warning, q ends
# it, and nothing is left behind (no child process, no board, no temporary
# directory); Ctrl-C and a crashed child also end clean; compare prints
# five rows and a CSV that parses.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
export THREADLAB_BOARD_DIR="$tmp/boards"
export TMPDIR="$tmp"              # the demo's own temporary directory
. "$(dirname "$0")/../lib.sh"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  tmux -S "$tmp/tmux-zh.sock" kill-server 2>/dev/null
  tmux -S "$tmp/tmux-big.sock" kill-server 2>/dev/null
  for pid in $(ours serve) $(ours load); do kill -9 "$pid" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
screen() { tmux -S "$sock" capture-pane -p -t demo; }
# await_frame FILE TEST CAPTURE...: capture the screen into FILE every
# 0.25 s until `TEST FILE` holds (true), or 30 s have passed (false): the
# frame a check reads is one the demo drew after the event, however late
# a busy machine draws it.
await_frame() {
  frame=$1 frame_test=$2; shift 2
  for _ in $(seq 120); do
    sleep 0.25
    "$@" >"$frame"
    "$frame_test" "$frame" && return 0
  done
  return 1
}
# The shell around each demo prints its status last, after the table: a
# frame with "exit=" holds the whole table too.
exited() { grep -q "^exit=" "$1"; }

# Our demos' children carry this in their environment; other threadlab
# servers on the machine do not.
export THREADLAB_DEMO_TEST_MARK="demo-test-$$"
ours() {   # ours serve|load: pids of our demos' children of that kind
  for e in /proc/[0-9]*/environ; do
    pid=${e#/proc/}; pid=${pid%/environ}
    grep -qsa "THREADLAB_DEMO_TEST_MARK=demo-test-$$" "$e" 2>/dev/null || continue
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "threadlab $1 " && echo "$pid"
  done
}

# await_loads N: wait until N of our load generators run (each starts
# once its server listens), as long as the fleet waits for a server to
# start (30 s) and more. False if they never did.
await_loads() {
  for _ in $(seq 600); do
    [ "$(ours load | wc -w)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}
# server_of MODEL: the pid of our server of that model ("" if none).
server_of() {
  for pid in $(ours serve); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "serve $1 " && echo "$pid"
  done
}

# Nothing of a demo may remain: children, boards, its directory.
leftovers() {
  for _ in $(seq 50); do
    [ -z "$(ours serve)$(ours load)" ] && break
    sleep 0.1
  done
  left="$(ours serve)$(ours load)"
  if [ -n "$left" ]; then bad "$1: child processes remain: $left"; else ok; fi
  n=$(ls "$THREADLAB_BOARD_DIR" 2>/dev/null | wc -l)
  [ "$n" = 0 ] && ok || bad "$1: $n board file(s) remain: $(ls "$THREADLAB_BOARD_DIR")"
  n=$(ls -d "$tmp"/threadlab-fleet-* 2>/dev/null | wc -l)
  [ "$n" = 0 ] && ok || bad "$1: the demo's temporary directory remains"
}

echo "== tests/demo/run.sh ($BIN)"
command -v tmux >/dev/null || { echo "  FAIL: tmux is not installed"; exit 1; }

# Each pane's shell ends in `exec sleep infinity`: it holds the pane for
# capture-pane until the test respawns or kills it, with no time limit.
# 1. The slow-handler demo in a 160x48 terminal.
tmux -S "$sock" new-session -d -s demo -x 160 -y 48 \
  "env TERM=xterm-256color THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR TMPDIR=$TMPDIR \
   $BIN demo --scenario slow-handler --duration 30; echo \"exit=\$?\"; exec sleep infinity"
shows_blocked() { grep -q "BLOCKED" "$1" && grep -q "reactor blocked 0\.[0-9] s in one handler" "$1"; }
await_frame "$tmp/screen" shows_blocked screen && ok || { bad "the demo never showed a BLOCKED loop"; sed 's/^/    /' "$tmp/screen" | head -30; }
for m in bio pool reactor multireactor vthread; do
  grep -Eq "(^|[| ])>?$m  pid [0-9]+" "$tmp/screen" && ok || bad "no pane titled '$m'"
done
grep -q "reactor blocked 0\.[0-9] s in one handler" "$tmp/screen" && ok \
  || bad "the reactor pane shows no blocked warning in its log"
grep -q "\[slow-handler\] 1% of lines sleep" "$tmp/screen" && ok || bad "no narrator line"
grep -q " 500ms$" "$tmp/screen" && ok || bad "160x48: the refresh status is not drawn whole (500ms)"

# 120x40, the documented minimum for the grid (five panes: 3x2, 40
# columns each): in every pane the failures (rej/err), the reactor's loop
# row with its BLOCKED time in place of its phase, the narrator whole
# (wrapped), the keys and the last column.
narrator="1% of lines sleep 200 ms: the reactor's one loop sleeps too (BLOCKED) and all \
its connections wait; BIO and the pool block just one thread; vthread's monitor gives a \
stuck carrier to a spare thread after 20 ms."
tmux -S "$sock" resize-window -t demo -x 120 -y 40
# A frame the demo drew at 120 columns (its legend on the last row): the
# first captures after the resize can still be the 160-column frame as
# tmux cut it (under ThreadSanitizer the redraw took that long).
drawn_at_120() {
  grep -Eq "[| ] reactor +64 +[0-9]+ BLOCKED 0\.[0-9]s" "$1" &&
    tail -1 "$1" | grep -q "q quit  ? help  500ms$"
}
await_frame "$tmp/s120" drawn_at_120 screen && ok || { bad "120x40: no reactor loop row with its BLOCKED time"; cat "$tmp/s120"; }
[ "$(grep -o 'rej [0-9]* err [0-9]*' "$tmp/s120" | wc -l)" = 5 ] && ok \
  || bad "120x40: not every pane shows its rej/err counts"
[ "$(grep -o 'LOOP      CHANS QUEUE PHASE' "$tmp/s120" | wc -l)" = 3 ] && ok \
  || bad "120x40: not three loop headings whole (reactor, multireactor, vthread)"
# The narrator: the rows from "[slow-handler]" to the legend, joined.
said=$(sed -n '/^\[slow-handler\]/,$p' "$tmp/s120" | sed '$d' | sed 's/^ *//' | tr '\n' ' ' | sed 's/ *$//')
[ "$said" = "[slow-handler] $narrator" ] && ok || bad "120x40: the narrator is cut: '$said'"
tail -1 "$tmp/s120" | grep -q "q quit  ? help  500ms$" && ok \
  || bad "120x40: the legend lacks 'q quit  ? help' or the whole '500ms': $(tail -1 "$tmp/s120")"

# 80x24: one pane at a time, and still the way out and to the help.
tmux -S "$sock" resize-window -t demo -x 80 -y 24
sleep 1
screen >"$tmp/s80"
tail -1 "$tmp/s80" | grep -q "q quit  ? help  500ms$" && ok \
  || bad "80x24: the legend lacks 'q quit  ? help  500ms': $(tail -1 "$tmp/s80")"
grep -q "tab switches" "$tmp/s80" && ok || bad "80x24: no word on the other panes"

# 120x36, below the tested minimum: tab zooms the panes in turn; the third
# is the reactor, full screen, with its whole loop row and BLOCKED.
tmux -S "$sock" resize-window -t demo -x 120 -y 36
sleep 0.5
tmux -S "$sock" send-keys -t demo Tab Tab Tab
reactor_zoomed() {
  head -1 "$1" | grep -q "reactor  pid" && grep -q "pane 3 of 5, zoomed" "$1" &&
    grep -Eq "^ reactor +64 \[.*io +BLOCKED 0\.[0-9]s" "$1"
}
await_frame "$tmp/s36" reactor_zoomed screen && ok || { bad "120x36: tab did not zoom the reactor with its BLOCKED loop"; cat "$tmp/s36"; }
tmux -S "$sock" send-keys -t demo q
# The table is printed on the terminal once the full screen is gone.
await_frame "$tmp/table" exited screen
grep -q "^exit=0" "$tmp/table" && ok || { bad "q did not end the demo with status 0"; cat "$tmp/table"; }
for m in bio pool reactor multireactor vthread; do
  grep -Eq "^$m +[0-9]+ " "$tmp/table" && ok || bad "the table has no row for $m"
done
# The table fits the 80 columns it was printed in (tmux would wrap a wider
# one onto the next row, and no row would start with a model's name then).
long=$(sed -n '/^model /,/^ threadlab compare/p' "$tmp/table" | awk 'length > 80' | wc -l)
[ "$long" = 0 ] && grep -q "^model  .*lines/s .*p99 .*threads .*errors  server$" "$tmp/table" && ok \
  || { bad "the table is wider than 80 columns"; cat "$tmp/table"; }
leftovers "after q"
tmux -S "$sock" kill-server 2>/dev/null

# 1b. The same demo in Chinese (--lang zh), at 120x40, the grid's tested
# minimum, with no UTF-8 locale in the environment (top falls back to
# C.UTF-8): the glossary's terms, and in every pane nothing essential cut.
# tmux -u: the terminal itself takes UTF-8 whatever the locale says. A
# socket of its own: a new session on the one just killed races with that
# server's exit ("server exited unexpectedly").
zsock="$tmp/tmux-zh.sock"
zscreen() { tmux -S "$zsock" capture-pane -p -t demo; }
tmux -u -S "$zsock" new-session -d -s demo -x 120 -y 40 \
  "env -u LANG -u LC_ALL -u LC_MESSAGES TERM=xterm-256color THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR \
   TMPDIR=$TMPDIR $BIN demo --lang zh --scenario slow-handler --duration 30; echo \"exit=\$?\"; exec sleep infinity"
shows_blocked_zh() { grep -Eq "[| ] reactor +64 +[0-9]+ 阻塞 0\.[0-9]s" "$1"; }
await_frame "$tmp/zh" shows_blocked_zh zscreen && ok || { bad "zh 120x40: no reactor loop row with its 阻塞 (blocked) time"; cat "$tmp/zh"; }
# The glossary's terms: 事件循环 (event loop), 任务队列 (task queue),
# 阻塞 (blocked), 线程 (thread), 连接 (connection).
for term in 事件循环 任务队列 阻塞 线程 连接; do
  grep -q "$term" "$tmp/zh" && ok || bad "zh 120x40: the screen lacks the term $term"
done
[ "$(grep -o '拒绝 [0-9]* 错误 [0-9]*' "$tmp/zh" | wc -l)" = 5 ] && ok \
  || bad "zh 120x40: not every pane shows its 拒绝/错误 (rejected/errors) counts"
# (the reactor's, the multireactor's and vthread's: each pane's heading whole)
[ "$(grep -o '事件循环   通道  队列 阶段' "$tmp/zh" | wc -l)" = 3 ] && ok \
  || bad "zh 120x40: a loop heading is cut (事件循环 ... 阶段)"
for m in bio pool reactor multireactor vthread; do
  grep -Eq "(^|[| ])>?$m  pid [0-9]+" "$tmp/zh" && ok || bad "zh 120x40: no pane titled '$m'"
done
# Every row within 120 columns as the terminal shows them: counted in
# bytes (LC_ALL=C), an ASCII byte is one column, a character of three
# bytes (every CJK one here, lead byte 0xE0-0xEF) two.
wide=$(LC_ALL=C awk '{ n = 0; for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
         if (c >= "\340" && c <= "\357") n += 2; else if (c < "\200") n += 1 }
       if (n > 120) print }' "$tmp/zh" | wc -l)
[ "$wide" = 0 ] && ok || bad "zh 120x40: $wide rows wider than 120 columns"
tail -1 "$tmp/zh" | grep -q "q 退出  ? 帮助  500ms$" && ok \
  || bad "zh 120x40: the legend lacks 'q 退出  ? 帮助' (quit, help) or '500ms': $(tail -1 "$tmp/zh")"
tail -1 "$tmp/zh" | grep -q "等待事件" && ok || bad "zh 120x40: the legend's states are not in Chinese"
# The narrator, in Chinese and whole: the rows from "[slow-handler]" to the
# legend, joined. CJK wraps between characters, not at spaces, so spaces
# are left out of both sides.
zh_narrator="[slow-handler] 1% 的行 sleep 200 毫秒：Reactor 唯一的事件循环也跟着睡（阻塞），\
它的所有连接都得等；BIO 和线程池只阻塞一个线程；vthread 的监控线程 20 毫秒后让备用线程接管\
卡住的载体线程。"
said=$(sed -n '/^\[slow-handler\]/,$p' "$tmp/zh" | sed '$d' | tr -d ' \n')
[ "$said" = "$(printf '%s' "$zh_narrator" | tr -d ' ')" ] && ok \
  || bad "zh 120x40: the narrator is not the Chinese one, whole: '$said'"
tmux -S "$zsock" send-keys -t demo '?'
helps_in_zh() { grep -q "threadlab top：按键" "$1"; }
await_frame "$tmp/zh.help" helps_in_zh zscreen
grep -q "threadlab top：按键" "$tmp/zh.help" && grep -q "S 阻塞于 !sleep" "$tmp/zh.help" && ok \
  || { bad "zh: the help box is not in Chinese"; head -30 "$tmp/zh.help"; }
tmux -S "$zsock" send-keys -t demo x q
# The table after it: Chinese headings and lines around it, a row per
# model, every row within the 80 columns it is made for (counted as above).
await_frame "$tmp/zh.table" exited zscreen
grep -q "^exit=0" "$tmp/zh.table" && ok || bad "zh: q did not end the demo with status 0"
for term in "场景 slow-handler：" "往返时间" "模型" "行/秒" "线程" "错误  服务器" \
            "（几个模型并排运行" "提前结束"; do
  grep -q "$term" "$tmp/zh.table" && ok || bad "zh: the table lacks '$term'"
done
for m in bio pool reactor multireactor vthread; do
  grep -Eq "^$m +[0-9]+ " "$tmp/zh.table" && ok || bad "zh: the table has no row for $m"
done
wide=$(sed -n '/^场景 /,/^ threadlab compare/p' "$tmp/zh.table" | LC_ALL=C awk '{ n = 0
         for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
           if (c >= "\340" && c <= "\357") n += 2; else if (c < "\200") n += 1 }
         if (n > 80) print }' | wc -l)
[ "$wide" = 0 ] && ok || { bad "zh: $wide table rows wider than 80 columns"; cat "$tmp/zh.table"; }
leftovers "after q (zh)"
tmux -S "$zsock" kill-server 2>/dev/null

# 2. Without a terminal: plain snapshots, then the table; a server that
#    crashes midway is reported as a crash, by its signal's name, the demo
#    exits 1, and still nothing is left behind. The crash lands while the
#    loads run, by construction: the kill waits for the reactor's load (its
#    server is listening then), and the run is 60 s long, ended by SIGINT
#    once the crashed server is gone. (A 6 s run with the server looked
#    for 5 s, then killed 2 s later, could miss it on a loaded machine:
#    the fleet gives a server 30 s to start, and the demo then exited 0.)
"$BIN" demo --models bio,reactor --duration 60 --interval 500 >"$tmp/plain" 2>&1 &
dpid=$!
await_loads 2 && victim=$(server_of reactor)
if [ -n "$victim" ]; then
  kill -SEGV "$victim"
  for _ in $(seq 100); do [ -z "$(server_of reactor)" ] && break; sleep 0.1; done
else
  bad "the demo's reactor server and its load never both ran"
fi
kill -INT "$dpid"
wait "$dpid"; st=$?
[ "$st" = 1 ] && ok || bad "a demo whose server crashed exited $st, wanted 1"
grep -q "^--- threadlab top" "$tmp/plain" && ok || bad "no plain snapshots without a terminal"
grep -Eq "^bio +[0-9]+ " "$tmp/plain" && ok || bad "no table row for bio"
# "crashed: SIGSEGV"; under ASan its own handler exits 1 instead.
grep -Eq "the reactor server (crashed: SIGSEGV|exit [0-9]+); its last words" \
  "$tmp/plain" && ok || { bad "the crashed reactor is not reported"; tail -5 "$tmp/plain"; }
grep -Eq "^reactor .*(crashed: SIGSEGV|exit [0-9]+)$" "$tmp/plain" && ok \
  || bad "the table's reactor row does not say it crashed"
leftovers "after a crash"

# 3. Ctrl-C (SIGINT to the demo alone): children stopped, table printed,
#    and the recording finished: it replays whole.
"$BIN" demo --models pool,multireactor --duration 30 --interval 300 --record "$tmp/int.tlr" \
    >"$tmp/int" 2>&1 &
dpid=$!
for _ in $(seq 100); do
  "$BIN" replay "$tmp/int.tlr" --plain 2>/dev/null | grep -q '^--- frame 2 ' && break
  sleep 0.1
done
kill -INT "$dpid"
if timeout 20 sh -c "while kill -0 $dpid 2>/dev/null; do sleep 0.1; done"; then
  wait "$dpid"; ok
else
  bad "the demo did not end within 20 s of SIGINT"; kill -9 "$dpid"
fi
grep -Eq "^multireactor +[0-9]+ " "$tmp/int" && ok || bad "no table after SIGINT"
grep -Eq "^\(cut short: stopped after [0-9.]+ s of the 30 s planned" "$tmp/int" && ok \
  || bad "the table after SIGINT does not say the run was cut short"
"$BIN" replay "$tmp/int.tlr" --plain >"$tmp/int.replay" 2>"$tmp/int.rerr"; st=$?
[ "$st" = 0 ] && [ ! -s "$tmp/int.rerr" ] && grep -q '^--- frame 2 ' "$tmp/int.replay" && ok \
  || { bad "the demo's recording after SIGINT does not replay whole (exit $st)"; cat "$tmp/int.rerr"; }
# The replay's status line in Chinese, after the narrator, which the
# recording holds in both languages (the demo ran in English).
"$BIN" replay "$tmp/int.tlr" --plain --lang zh --frame 2 >"$tmp/int.zh" 2>&1
# (wrapped over rows: joined, without spaces)
tr -d ' \n' <"$tmp/int.zh" | grep -q '\[steady\]数一数线程：.*\[回放\]第2/[0-9]*帧t=.*速度1x已暂停' \
  && ok || { bad "replay --lang zh: no Chinese status line"; tail -3 "$tmp/int.zh"; }
leftovers "after SIGINT"

# 4. compare: five rows, lines/s above zero, no errors; the CSV parses.
"$BIN" compare --duration 1 --conns 16 --csv "$tmp/c.csv" >"$tmp/compare" 2>&1; st=$?
[ "$st" = 0 ] && ok || { bad "compare exited $st"; cat "$tmp/compare"; }
for m in bio pool reactor multireactor vthread; do
  awk -v m="$m" '$1 == m && $2 > 0 && $8 == 0 { found = 1 } END { exit !found }' \
    "$tmp/compare" && ok || bad "compare: no row for $m with lines/s > 0 and 0 errors"
done
# The CSV: a header naming the columns, then one row per model, in order.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { models = models $col["model"] " "
           if (!($col["lines_per_s"] > 0) || $col["errors"] != 0 || !($col["peak_threads"] >= 1) ||
               !($col["peak_rss_kb"] > 0) || NF != 13) bad = 1 }
         END { exit bad || models != "bio pool reactor multireactor vthread " }' "$tmp/c.csv" \
  && ok || { bad "the CSV does not parse as five good rows"; cat "$tmp/c.csv"; }
"$BIN" compare --models bio --duration 1 --json >"$tmp/c.json" 2>/dev/null
grep -Eq '^\[\{"model":"bio","have_load":true,"lines_ok":[1-9][0-9]*,.*\}\]$' "$tmp/c.json" \
  && ok || { bad "compare --json is not a list with a bio row"; cat "$tmp/c.json"; }
# --plot: a picture with gnuplot, or a clear word without it.
"$BIN" compare --models bio --duration 1 --plot "$tmp/bars.svg" >"$tmp/plot" 2>&1; st=$?
if command -v gnuplot >/dev/null; then
  [ "$st" = 0 ] && grep -q "<svg" "$tmp/bars.svg" && ok || bad "compare --plot wrote no SVG (exit $st)"
  grep -q "threadlab compare: steady" "$tmp/bars.svg" && ok || bad "the plot's title lacks the scenario"
else
  [ "$st" = 1 ] && grep -q "needs gnuplot, which is not installed" "$tmp/plot" && \
    grep -Eq "^bio +[0-9]+ " "$tmp/plot" && ok || bad "compare --plot without gnuplot: exit $st"
fi
leftovers "after compare"

# 5. compare and compare --sweep: a server killed mid-run (SIGKILL, which
#    no handler catches, under the sanitizers too) is a crash, named so on
#    stderr, in the table's server column and in the CSV; exit 1. Each run
#    is 60 s long and the kill waits for the load, so it lands mid-run.
crash_compare() {   # crash_compare NAME ARGS...: run compare, kill its server
  name=$1; shift
  "$BIN" compare --models reactor --duration 60 --csv "$tmp/$name.csv" "$@" \
      >"$tmp/$name" 2>&1 &
  cpid=$!
  if await_loads 1 && victim=$(server_of reactor) && [ -n "$victim" ]; then
    kill -KILL "$victim"
  else
    bad "$name: the reactor server and its load never both ran"
  fi
  wait "$cpid"; st=$?
  [ "$st" = 1 ] && ok || bad "$name whose server crashed exited $st, wanted 1"
  grep -q "threadlab compare: the reactor server crashed: SIGKILL" "$tmp/$name" && ok \
    || { bad "$name: the crash is not said on stderr"; cat "$tmp/$name"; }
  grep -Eq "^reactor .*crashed: SIGKILL$" "$tmp/$name" && ok \
    || bad "$name: the reactor row does not say crashed: SIGKILL"
  grep -Eq "^reactor,.*,crashed: SIGKILL$" "$tmp/$name.csv" && ok \
    || { bad "$name: the CSV row does not say crashed: SIGKILL"; cat "$tmp/$name.csv"; }
}
crash_compare compare-crash
crash_compare sweep-crash --sweep conns=8
leftovers "after the crashed compares"

# A classroom PC's soft fd limit of 256 (1024 is common) does not hide the
# many-idle lesson: demo raises it to the hard limit, and every connection
# opens. When the hard limit is too low too, the screen says so, with the
# command that fixes it.
sh -c 'ulimit -Sn 256 && exec "$0" demo --plain --models reactor --scenario many-idle --conns 400 --duration 1 --interval 500' \
  "$BIN" >"$tmp/fds" 2>&1
grep -Eq '^reactor .* 0 +ok(; no line sent)?$' "$tmp/fds" && ! grep -q "TOO FEW FILES\|cut short" "$tmp/fds" && ok \
  || { bad "demo under a soft fd limit of 256 lost connections"; tail -5 "$tmp/fds"; }
sh -c 'ulimit -n 256 && exec "$0" demo --plain --models reactor --scenario many-idle --conns 400 --duration 1 --interval 500' \
  "$BIN" >"$tmp/fds" 2>&1
grep -q '^\[many-idle\] TOO FEW FILES: .*hold only 256 .*ulimit -n 464' "$tmp/fds" && ok \
  || { bad "demo under a hard fd limit of 256 did not say so on screen"; tail -5 "$tmp/fds"; }
leftovers "after the fd-limit demos"

# 1c. Projector mode, as the teacher's guide offers it for demo: --big at
# 120x36, the classroom's size. Its slower refresh (1000 ms) is on the
# legend, both panes have their names, and q ends it clean.
bsock="$tmp/tmux-big.sock"
tmux -S "$bsock" new-session -d -s demo -x 120 -y 36 \
  "env TERM=xterm-256color THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR TMPDIR=$TMPDIR \
   $BIN demo --big --models bio,reactor --duration 60; echo \"exit=\$?\"; exec sleep infinity"
projected() {
  tail -1 "$1" | grep -q "q quit  ? help  1000ms$" &&
    grep -Eq "(^|[| ])>?bio  pid [0-9]+" "$1" && grep -Eq "(^|[| ])>?reactor  pid [0-9]+" "$1"
}
await_frame "$tmp/big" projected tmux -S "$bsock" capture-pane -p -t demo && ok || { bad "demo --big at 120x36: no frame with both panes and its 1000ms refresh"; cat "$tmp/big"; }
tmux -S "$bsock" send-keys -t demo q
await_frame "$tmp/big" exited tmux -S "$bsock" capture-pane -p -t demo
grep -q "^exit=0" "$tmp/big" && ok || { bad "demo --big: q did not end it with status 0"; tail -5 "$tmp/big"; }
tmux -S "$bsock" kill-server 2>/dev/null
leftovers "after demo --big"

# A recording that cannot be written: refused before any server starts.
"$BIN" demo --duration 2 --record "$tmp/no/such/dir/d.tlr" >"$tmp/bad" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "threadlab demo: --record: .*No such file or directory" "$tmp/bad" && \
  ! grep -q "starting" "$tmp/bad" && ok || { bad "demo --record to a bad path: exit $st"; cat "$tmp/bad"; }
"$BIN" demo --duration 2 --record /dev/full >"$tmp/bad" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "No space left on device" "$tmp/bad" && ok || bad "demo --record /dev/full: exit $st"
leftovers "after a bad --record"
# Panes that cannot be shown (a board folder the viewer refuses: not
# private) fail the demo, and a recording that got no frame is not left
# behind: the demo said "recorded (0 frames)" and exited 0.
mkdir -m 777 "$tmp/open-boards"
THREADLAB_BOARD_DIR="$tmp/open-boards" "$BIN" demo --models reactor --duration 1 --plain \
    --interval 300 --record "$tmp/none.tlr" >"$tmp/bad" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "is not usable" "$tmp/bad" && grep -q "nothing was recorded" "$tmp/bad" \
  && [ ! -e "$tmp/none.tlr" ] && ok \
  || { bad "demo with panes it cannot show: exit $st, file $(ls "$tmp/none.tlr" 2>&1)"; cat "$tmp/bad"; }
leftovers "after a demo it could not show"

# Bad input: clear errors, status 2.
"$BIN" demo --models bio,nosuch >"$tmp/bad" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "no model called 'nosuch'" "$tmp/bad" && ok || bad "demo --models nosuch: exit $st"
"$BIN" compare --scenario nosuch >"$tmp/bad" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "no scenario called 'nosuch'" "$tmp/bad" && ok || bad "compare --scenario nosuch: exit $st"
"$BIN" compare --lang fr >"$tmp/bad" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "\-\-lang: 'fr' is not en or zh" "$tmp/bad" && ok || bad "compare --lang fr: exit $st"
"$BIN" compare --plot out.gif >"$tmp/bad" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "must end in .png or .svg" "$tmp/bad" && ok || bad "compare --plot out.gif: exit $st"

summary demo
