#!/bin/sh
# run.sh -- threadlab top on a real terminal (tmux), against a BIO server
# under load: read the screen as a person sees it, resize, quit with q, and
# check that the terminal came back sane.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
export THREADLAB_BOARD_DIR="$tmp/boards"
spid="" lpid=""
. "$(dirname "$0")/../lib.sh"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  [ -n "$lpid" ] && kill "$lpid" 2>/dev/null
  [ -n "$spid" ] && kill -INT "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
screen() { tmux -S "$sock" capture-pane -p -t top; }
# shows ERE: the screen shows it within 10 s. A refresh on a machine that
# others load can take seconds; what is tested is what top draws, not when.
shows() {
  for _ in $(seq 100); do screen | grep -Eq -- "$1" && return 0; sleep 0.1; done
  return 1
}

echo "== tests/tui/run.sh ($BIN)"
command -v tmux >/dev/null || { echo "  FAIL: tmux is not installed"; exit 1; }

start_server serve bio
spid=$server_pid
# The load runs until the screen tests are done (they kill it): the CPU%
# and Enter checks need live connections, and on a busy machine the checks
# before them can take longer than any fixed duration. 600 s bounds it.
"$BIN" load "127.0.0.1:$port" --conns 300 --duration 600 --mix sleep=20:5 \
    --no-progress >"$tmp/load.log" 2>&1 &
lpid=$!

# Each pane's shell ends in `exec sleep infinity`: it holds the pane for
# capture-pane until the test respawns or kills it, with no time limit.
# top_in_a_shell CHANNEL: the pane's command. The shell around top records
# the terminal's modes after top exits, then signals CHANNEL (tmux
# wait-for), the event that await_exit awaits.
top_in_a_shell() {
  echo "env TERM=xterm-256color THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR $BIN top; \
   st=\$?; stty -a > $tmp/stty; echo \"exit=\$st\" >> $tmp/stty; mv $tmp/stty $tmp/after; \
   tmux -S $sock wait-for -S $1; exec sleep infinity"
}
# await_exit CHANNEL: true once the shell says top has exited (30 s at
# most: a hang guard against a top that never quits; a signal sent before
# the wait begins is kept by tmux, so it is never missed).
await_exit() { timeout 30 tmux -S "$sock" wait-for "$1"; }
tmux -S "$sock" new-session -d -s top -x 120 -y 40 "$(top_in_a_shell quit-by-q)"

# Wait until top shows 300 connections and their 300 threads (the load
# ramps up; a connection is counted when it is accepted, its thread when
# it first runs, which a busy machine can hold back past the next frame).
shown="" threads=""
for _ in $(seq 120); do
  sleep 0.25
  screen >"$tmp/screen1"
  grep -q "conns 300 " "$tmp/screen1" && shown=yes
  grep -q "threads 302:" "$tmp/screen1" && threads=yes
  [ -n "$shown" ] && [ -n "$threads" ] && break
done
[ -n "$shown" ] && ok || { bad "top never showed 'conns 300'"; sed 's/^/    /' "$tmp/screen1" | head -20; }
grep -q "^ *bio  pid $spid" "$tmp/screen1" && ok || bad "no 'bio  pid $spid' header"
[ -n "$threads" ] && ok || bad "no 'threads 302:' (main, acceptor + 300 connection threads)"
grep -q "one cell per thread" "$tmp/screen1" && ok || bad "300 threads are not drawn as a grid"
# Connection threads in their states: blocked in read, or in !sleep.
n_cells=$(grep -o ' [bSR] ' "$tmp/screen1" | wc -l)
[ "$n_cells" -ge 100 ] && ok || bad "only $n_cells state cells on screen"
grep -q "R running" "$tmp/screen1" && ok || bad "the legend is missing"
grep -Eq "spawn +conn-[0-9]+: a thread for conn" "$tmp/screen1" && ok || bad "the event log shows no spawn"

# Keys: t switches to a list, p pauses.
tmux -S "$sock" send-keys -t top t
shows "THREAD          STATE" && ok || bad "t did not switch to the list"
# The list says how many it shows of the 302 (main, the acceptor, 300
# connections), and the keys scroll it. The keys are sent as xterm's
# terminfo spells them (top runs with that TERM; tmux's own names for End
# and Home send screen's sequences).
key() { tmux -S "$sock" send-keys -t top -l "$(tput -T xterm-256color "$1")"; }
shows "[0-9]+ of 302 shown \(1-[0-9]+;" && ok \
  || { bad "the list does not say how many threads it shows"; screen | tail -12; }
key kend
shows "[0-9]+ of 302 shown \([0-9]+-302;" && ok || bad "End did not scroll to the last thread"
key kpp; key kcuu1
shows "[0-9]+ of 302 shown \([0-9]+-291;" && ok || bad "PgUp and Up did not scroll back 11"
key kcud1; key khome
shows "[0-9]+ of 302 shown \(1-[0-9]+;" && ok || bad "Home did not scroll to the top"
# The CPU% column: a figure from /proc once two samples exist (the
# connection threads run a little for every line), "-" never everywhere.
shows "FOR  CPU%    CONN" && ok || bad "the list has no CPU% column"
shows "blocked-[a-z]+ +[0-9.]+s +[0-9]+\.[0-9] +[0-9]+ " && ok \
  || { bad "no thread shows a CPU% figure"; screen | head -12; }
# Enter on the first connection thread: its figures in a box; any key closes it.
key khome; key kcud1; tmux -S "$sock" send-keys -t top Enter
shows "conn-[0-9]+  \(conn, tid [0-9]+\)" && ok || { bad "Enter showed no thread detail"; screen | head -20; }
screen | grep -Eq "bytes +in [1-9][0-9.]* (B|KiB|MiB), out [1-9]" && ok \
  || { bad "the detail shows no bytes in and out"; screen | grep -E "bytes|state|lines"; }
screen | grep -Eq "state +blocked-(io|sleep), for [0-9.]+s" && screen | grep -Eq "CPU +([0-9.]+%|-) now" \
  && screen | grep -q "pending out" && ok || bad "the detail lacks state, CPU or pending output"
tmux -S "$sock" send-keys -t top x
for _ in $(seq 100); do screen | grep -q "tid [0-9]*)" || break; sleep 0.1; done
screen | grep -q "tid [0-9]*)" && bad "a key did not close the detail" || ok
# o orders the list: by state, then by lines, then by CPU, then back by role.
tmux -S "$sock" send-keys -t top o
shows "LINES \(by state\)" && ok || bad "o did not order the list by state"
tmux -S "$sock" send-keys -t top o
shows "LINES \(by lines\)" && ok || bad "a second o did not order the list by lines"
tmux -S "$sock" send-keys -t top o
shows "LINES \(by CPU\)" && ok || bad "a third o did not order the list by CPU"
tmux -S "$sock" send-keys -t top o
tmux -S "$sock" send-keys -t top p
shows "PAUSED" && ok || { bad "p did not pause"; screen | tail -3; }

# Resize to 60x20 and back: still alive, still drawing.
tmux -S "$sock" resize-window -t top -x 60 -y 20
shows "bio  pid" && ok || { bad "nothing sensible at 60x20"; screen; }
tmux -S "$sock" resize-window -t top -x 30 -y 10
shows "terminal too small" && ok || bad "no 'too small' message at 30x10"
tmux -S "$sock" resize-window -t top -x 120 -y 40
shows "bio  pid" || true

# q quits, with status 0, and the terminal is back in its normal modes.
# Beside two CPU hogs (check-stress) top, just back from three resizes of
# a 300-thread screen, once had not quit after 10 s; if a q is ever lost,
# the screen printed below will show it.
tmux -S "$sock" send-keys -t top q
if await_exit quit-by-q && [ -s "$tmp/after" ]; then
  grep -q "^exit=0" "$tmp/after" && ok || bad "top exited with $(head -1 "$tmp/after")"
  grep -q " icanon" "$tmp/after" && grep -q " echo" "$tmp/after" && ok \
    || { bad "terminal not restored (icanon/echo off after top)"; cat "$tmp/after"; }
else
  bad "q did not quit top (in 30 s); the screen:"; screen | tail -8
fi

# When the server exits while watched, top shows it as gone.
# respawn-pane, not kill-session + new-session: with no session left the
# tmux server exits, and a new session can race with its exit.
tmux -S "$sock" respawn-pane -k -t top \
  "env TERM=xterm THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR NO_COLOR=1 $BIN top $spid; exec sleep infinity"
for _ in $(seq 50); do screen | grep -q "bio  pid $spid" && break; sleep 0.1; done
kill "$lpid" 2>/dev/null; lpid=""
kill -INT "$spid"; wait "$spid"; spid=""
gone=""
for _ in $(seq 30); do
  sleep 0.2
  if screen | grep -q "GONE: the server exited"; then gone=yes; break; fi
done
[ -n "$gone" ] && ok || { bad "a server that exits is not shown as gone"; screen | head -5; }

# A server killed with SIGKILL leaves its board's link behind (to a memfd
# that died with it): top asks for the pid at every refresh, so it shows
# GONE within one.
start_server killed bio
kpid=$server_pid
tmux -S "$sock" respawn-pane -k -t top \
  "env TERM=xterm THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR NO_COLOR=1 $BIN top --interval 500 $kpid; exec sleep infinity"
for _ in $(seq 50); do screen | grep -q "bio  pid $kpid" && break; sleep 0.1; done
kill -9 "$kpid"; wait "$kpid" 2>/dev/null
[ -L "$THREADLAB_BOARD_DIR/$kpid.board" ] && ok || bad "the killed server's board link is not left behind"
gone=""
for _ in $(seq 200); do       # one refresh is 0.5 s; 20 s for a loaded machine
  sleep 0.1
  if screen | grep -q "GONE: the server exited"; then gone=yes; break; fi
done
[ -n "$gone" ] && ok || { bad "a server killed with SIGKILL is not shown as gone"; screen | head -5; }
# The same in text: the snapshot after the kill says GONE, and top, whose
# one target is gone, ends by itself.
start_server killed bio
kpid=$server_pid
"$BIN" top --plain --interval 200 "$kpid" >"$tmp/killed.out" 2>&1 &
tpid=$!
for _ in $(seq 50); do grep -q "bio  pid $kpid" "$tmp/killed.out" && break; sleep 0.1; done
before=$(grep -c '^--- threadlab top' "$tmp/killed.out")
kill -9 "$kpid"; wait "$kpid" 2>/dev/null
if timeout 30 sh -c "while kill -0 $tpid 2>/dev/null; do sleep 0.05; done"; then
  wait "$tpid"; ok
else
  bad "top --plain still watches a server 30 s after its SIGKILL"; kill "$tpid"; wait "$tpid"
fi
after=$(grep -c '^--- threadlab top' "$tmp/killed.out")
# Counted in snapshots, not seconds: at most one read before the kill and
# printed after the count, one read while the kernel was still killing,
# then the one that says GONE (before the fix: one every 0.2 s, forever).
[ $((after - before)) -le 3 ] && tail -n +2 "$tmp/killed.out" | grep -q "GONE" && ok \
  || bad "after the SIGKILL: $((after - before)) more snapshots, GONE $(grep -c GONE "$tmp/killed.out") times"
rm -f "$THREADLAB_BOARD_DIR"/*.board    # the killed servers' (no one else cleans them here)

# Ctrl-\ (SIGQUIT) kills top, and the terminal is not left raw: the crash
# handler restores the saved modes with tcsetattr (endwin is not safe there).
# The key is sent once top has drawn a screen: its crash handler is in
# place by then.
rm -f "$tmp/after"
tmux -S "$sock" respawn-pane -k -t top "$(top_in_a_shell quit-by-sigquit)"
shows "q quit" || bad "the respawned top drew no screen"
tmux -S "$sock" send-keys -t top 'C-\'
if await_exit quit-by-sigquit && [ -s "$tmp/after" ]; then
  grep -q "^exit=131" "$tmp/after" && ok || bad "top after Ctrl-\\: $(grep exit= "$tmp/after"), wanted 131 (SIGQUIT)"
  grep -q " icanon" "$tmp/after" && grep -q " echo" "$tmp/after" && ok \
    || { bad "Ctrl-\\ left the terminal raw (icanon/echo off)"; cat "$tmp/after"; }
else
  bad "Ctrl-\\ did not end top"
fi

# TERM=dumb cannot draw a full screen: top says so and prints text.
start_server dumb bio
dpid=$server_pid
tmux -S "$sock" respawn-pane -k -t top \
  "env TERM=dumb THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR $BIN top --count 2 --interval 200 $dpid; \
   echo \"exit=\$?\"; exec sleep infinity"
for _ in $(seq 50); do screen | grep -q "^exit=" && break; sleep 0.1; done
screen >"$tmp/dumb"
grep -q "^exit=0" "$tmp/dumb" && grep -q "TERM=dumb cannot draw a full screen" "$tmp/dumb" && \
  [ "$(grep -c '^--- threadlab top' "$tmp/dumb")" = 2 ] && ok \
  || { bad "TERM=dumb: no fallback to text"; sed 's/^/    /' "$tmp/dumb" | head -20; }
kill -INT "$dpid"; wait "$dpid"

# A reactor whose loop a !sleep blocks: the loop's row says BLOCKED.
start_server reactor reactor --blocked-warn-ms 500
rpid=$server_pid rport=$port
tmux -S "$sock" respawn-pane -k -t top \
  "env TERM=xterm-256color THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR $BIN top --interval 200 $rpid; exec sleep infinity"
for _ in $(seq 50); do screen | grep -q "reactor  pid $rpid" && break; sleep 0.1; done
(printf '!sleep 2000\n' | timeout 10 nc -q3 127.0.0.1 "$rport" >/dev/null 2>&1 &)
blocked=""
for _ in $(seq 100); do      # the !sleep holds the loop 2 s from when nc's line lands
  sleep 0.1
  if screen | grep -q "reactor .*BLOCKED"; then blocked=yes; break; fi
done
[ -n "$blocked" ] && ok || { bad "top never showed the reactor's loop BLOCKED"; screen | head -12; }
screen | grep -q "S blocked-sleep" && ok || bad "the loop thread is not shown in blocked-sleep"
kill -INT "$rpid"; wait "$rpid"

summary tui
