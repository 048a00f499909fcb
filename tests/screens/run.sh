#!/bin/sh
# run.sh -- what a class sees, at the three sizes a classroom meets (a
# laptop's 120x36, a projector's 160x48, a small terminal's 80x24), in
# English and in Chinese: each screen item of issue 34 read off a real
# terminal (tmux), the six sizes and languages side by side, so each item
# costs the wait for its slowest screen, not six.
#   sim --viz:  the legend names the runnable state (r runnable, r 可运行),
#               not the key help that stood in its place.
#   many-idle:  the BIO grid's "+N" stays inside its pane: whole, and no
#               digit drawn over (or past) the divider.
#   top:        a live server's board removed, then back: "cannot be
#               read", never GONE; read again once back (top --record too).
#   detail:     a thread that lingers after !quit counts the wait as
#               blocked, not as running.
#   recordings: the shipped ones replay in the viewer's language: the
#               narrator, the threads the guide teaches, sim's next: line,
#               and the table q prints.
#   replay w:   from warning to warning as the text replay marks them (a
#               loop that stalls again warns again), then a word when none
#               is left.
# Every wait is for something on screen, bounded; none is a sleep followed
# by a check.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
export THREADLAB_BOARD_DIR="${THREADLAB_BOARD_DIR:-$tmp/boards}/screens-$$"
mkdir -p -m 700 "$THREADLAB_BOARD_DIR"
. "$(dirname "$0")/../lib.sh"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  rm -rf "$tmp" "$THREADLAB_BOARD_DIR"
}
trap cleanup EXIT

SIZES="120x36 160x48 80x24"
LANGS="en zh"

# six NAME CMD: CMD --lang L in a session NAME-WxH-L at each size and in
# each language (-u: tmux draws UTF-8 whatever this shell's locale says).
six() {
  name=$1; shift
  for size in $SIZES; do
    for lang in $LANGS; do
      tmux -u -S "$sock" new-session -d -s "$name-$size-$lang" -x "${size%x*}" -y "${size#*x}" \
        -c "$tmp" "env TERM=xterm-256color LANG=C THREADLAB_BOARD_DIR=$THREADLAB_BOARD_DIR \
        $* --lang $lang; echo screen-exit=\$?; sleep 60"
    done
  done
}
screen() { tmux -S "$sock" capture-pane -p -t "$1"; }
# shows SESSION ERE: the screen shows it within 20 s (a refresh on a
# machine others load can take seconds).
shows() {
  for _ in $(seq 200); do screen "$1" | grep -Eq -- "$2" && return 0; sleep 0.1; done
  return 1
}
# each NAME WHAT EN_ERE ZH_ERE: every screen of six NAME shows its
# language's ERE; then the sessions are closed.
each() {
  for size in $SIZES; do
    for lang in $LANGS; do
      s="$1-$size-$lang"
      if [ "$lang" = en ]; then want=$3; else want=$4; fi
      if shows "$s" "$want"; then ok; else
        bad "$2 at $size, $lang (no /$want/)"; screen "$s" | sed 's/^/    | /'
      fi
    done
  done
}
close() {
  for size in $SIZES; do
    for lang in $LANGS; do tmux -S "$sock" kill-session -t "$1-$size-$lang" 2>/dev/null; done
  done
}

echo "== tests/screens/run.sh ($BIN)"
command -v tmux >/dev/null || { echo "  FAIL: tmux is not installed"; exit 1; }
command -v socat >/dev/null || { echo "  FAIL: socat is not installed"; exit 1; }
# A session that lives as long as the test: with none left the tmux server
# exits, and the next new-session races with its exit.
tmux -S "$sock" new-session -d -s keep "sleep 600"

# ---- sim --viz: the runnable state in the legend -------------------------
# Paused before the first event: the legend is drawn, nothing moves.
six viz "$BIN" sim multireactor --cores 4 --conns 4 --duration 0.05 --viz --start-paused
each viz "the legend's runnable state" " r runnable" " r 可运行"
for size in $SIZES; do
  for lang in $LANGS; do
    screen "viz-$size-$lang" | grep -Eq " r \| q " && bad "key help where runnable belongs at $size, $lang" || ok
  done
done
close viz

# ---- the BIO grid's +N inside its pane (many-idle, 2000 threads) ---------
# At 5.4 s the BIO pane holds 2000 threads in read, more than its grid.
six grid "$BIN" replay "$ROOT/recordings/many-idle.tlr" --at 5.4
each grid "the grid's +N" "\+[0-9]{3,}( *\||$)" "\+[0-9]{3,}( *\||$)"
for size in $SIZES; do
  for lang in $LANGS; do
    s="grid-$size-$lang"
    # A label against the divider was cut by it; a digit after it ran on.
    if screen "$s" | grep -Eq "\+[0-9]+\||\|[0-9]"; then
      bad "a label runs into the divider at $size, $lang"; screen "$s" | grep -E "\+[0-9]+\||\|[0-9]" | sed 's/^/    | /'
    else ok; fi
  done
done
close grid

# ---- the shipped recordings, in the viewer's language --------------------
# Made by make recordings in whichever language: the narrator and the
# table come back in the replay's (both stayed English before), and BIO's
# pane counts the threads the guide teaches (threads 66: at 4 s).
six shipped "$BIN" replay "$ROOT/recordings/steady.tlr" --at 4
each shipped "the steady recording's narrator" "^\[steady\] Count threads" "^\[steady\] 数一数线程"
each shipped "the steady recording's BIO threads" "threads 66:" "线程 66："
for size in $SIZES; do
  for lang in $LANGS; do tmux -S "$sock" send-keys -t "shipped-$size-$lang" q; done
done
each shipped "the table q prints" "^model +lines/s" "^模型 +行/秒"
close shipped
six steps "$BIN" replay "$ROOT/recordings/sim-multireactor-steps.tlr" --at 0
each steps "the sim recording's status line" "^\[sim multireactor\] .* next: " "^\[模拟 multireactor\] .*下一个："
close steps

# ---- top's thread detail: a lingering close is not CPU time -------------
# A client sends !quit and keeps its end open 1.5 s: the BIO
# thread answers, then lingers in read until the client closes. The detail
# box, open on that thread, must count that wait as blocked, not running
# (it showed "running 1.5s" for a thread that ran for microseconds).
start_server quit bio
qpid=$server_pid
mkfifo "$tmp/quit.in"
socat -t 5 STDIO "TCP:127.0.0.1:$port" <"$tmp/quit.in" >"$tmp/quit.out" 2>&1 &
ncpid=$!
exec 3>"$tmp/quit.in"
six detail "$BIN" top --interval 100 "$qpid"
each detail "top of the !quit server" "bio  pid $qpid" "bio  pid $qpid"
for size in $SIZES; do
  for lang in $LANGS; do
    s="detail-$size-$lang"
    tmux -S "$sock" send-keys -t "$s" t
    shows "$s" "conn-1 +b " || bad "no conn-1 in the list at $size, $lang"
    tmux -S "$sock" send-keys -t "$s" Home Down Enter
  done
done
each detail "the detail of conn-1" "conn-1  \(conn, tid" "conn-1  （[^，]+，tid"
printf '!quit\n' >&3
for _ in $(seq 100); do [ -s "$tmp/quit.out" ] && break; sleep 0.1; done
sleep 1.5                                # the client holds its end: the thread lingers
exec 3>&-
wait "$ncpid"
each detail "conn-1 terminated" "state +terminated" "状态 +已结束"
each detail "the linger counted as blocked, not running" \
  "running [0-9.]+(ns|us|ms), waiting or blocked [0-9.]+s in all" \
  "累计运行 [0-9.]+(ns|us|ms)，等待或阻塞 [0-9.]+s"
close detail
kill -INT "$qpid"; wait "$qpid"

# ---- replay: w goes from warning to warning, and says when none is left --
# The frames where a warning starts, as the text replay marks them; w
# must visit each in turn at every size (a loop that stalls again is a
# warning again: slow-handler's reactor stalls on every !sleep), then stay
# and say that no warning starts after it.
# frame_is N: the ERE of the replay's position at frame N, in either
# language; a long Chinese narrator may wrap the line between 第 and N.
frame_is() { echo "(frame $1/|第 $1/|^ +$1/[0-9]+ 帧)"; }
for rec in slow-handler mixed; do
  starts=$("$BIN" replay "$ROOT/recordings/$rec.tlr" --plain --size 300x48 |
    awk '/^--- frame/ { f = $3 } /NEW WARNING here/ { print f }' | uniq | head -4)
  [ "$(echo "$starts" | wc -w)" -ge 2 ] && ok || bad "$rec.tlr: fewer than two warnings start: $starts"
  six "w-$rec" "$BIN" replay "$ROOT/recordings/$rec.tlr" --at 0
  for size in $SIZES; do
    for lang in $LANGS; do
      s="w-$rec-$size-$lang"
      tmux -S "$sock" send-keys -t "$s" g          # the first frame, paused
      shows "$s" "$(frame_is 1)" || { bad "replay $rec did not start at $size, $lang"; continue; }
      seen=""
      for f in $starts; do
        tmux -S "$sock" send-keys -t "$s" w
        shows "$s" "$(frame_is "$f")" || break
        seen="$seen $f"
      done
      [ "$seen" = " $(echo $starts)" ] && ok \
        || { bad "w in $rec at $size, $lang went to$seen, not $(echo $starts)"; screen "$s" | tail -4; }
    done
  done
  close "w-$rec"
done
# Past the last warning w stays and says so (where the line has room).
last=$("$BIN" replay "$ROOT/recordings/mixed.tlr" --plain --size 300x48 |
  awk '/^--- frame/ { f = $3 } /NEW WARNING here/ { print f }' | tail -1)
six w-end "$BIN" replay "$ROOT/recordings/mixed.tlr" --at 0
for size in 120x36 160x48; do
  for lang in $LANGS; do
    s="w-end-$size-$lang"
    tmux -S "$sock" send-keys -t "$s" G W
    shows "$s" "$(frame_is "$last")" || { bad "W from the end did not reach frame $last"; continue; }
    tmux -S "$sock" send-keys -t "$s" w
    if [ "$lang" = en ]; then want="no warning starts after this frame"; else want="此帧之后没有新警告"; fi
    shows "$s" "$want" && screen "$s" | grep -Eq "$(frame_is "$last")" && ok \
      || { bad "w past the last warning at $size, $lang: no '$want'"; screen "$s" | tail -4; }
  done
done
close w-end

# ---- top: a live server whose board cannot be read is not gone ----------
# Its board moved away (removed, as far as top can see), then back: every
# screen says the board cannot be read while the server lives, never GONE,
# and reads it again once it is back; top --record goes on meanwhile.
start_server board bio
bpid=$server_pid
six top "$BIN" top "$bpid"
each top "top of a live server" "bio  pid $bpid" "bio  pid $bpid"
"$BIN" top --plain --interval 100 --count 30 --record "$tmp/top.tlr" "$bpid" \
  >"$tmp/top.out" 2>&1 &
tpid=$!
for _ in $(seq 100); do grep -q "bio  pid $bpid" "$tmp/top.out" && break; sleep 0.1; done
mv "$THREADLAB_BOARD_DIR/$bpid.board" "$tmp/moved.board"
each top "a board that cannot be read" "BOARD UNREADABLE: the server lives" "看板无法读取：服务器进程仍在"
for _ in $(seq 100); do grep -q "cannot be read" "$tmp/top.out" && break; sleep 0.1; done
for size in $SIZES; do
  for lang in $LANGS; do
    screen "top-$size-$lang" | grep -Eq "GONE|已退出" && bad "GONE at $size, $lang while the server lives" || ok
  done
done
mv "$tmp/moved.board" "$THREADLAB_BOARD_DIR/$bpid.board"
for size in $SIZES; do
  for lang in $LANGS; do
    back=""
    for _ in $(seq 200); do
      screen "top-$size-$lang" | grep -Eq "UNREADABLE|无法读取" || { back=yes; break; }
      sleep 0.1
    done
    [ -n "$back" ] && ok || bad "the board came back, the screen at $size, $lang did not read it"
  done
done
close top
if timeout 60 sh -c "while kill -0 $tpid 2>/dev/null; do sleep 0.1; done"; then wait "$tpid"; st=$?; else st=timeout; fi
[ "$st" = 0 ] && [ "$(grep -c '^--- threadlab top' "$tmp/top.out")" = 30 ] && \
  grep -q "pid $bpid lives, but its board cannot be read" "$tmp/top.out" && \
  ! grep -q "GONE" "$tmp/top.out" && ok \
  || { bad "top --plain --record gave up on a live server: exit $st"; grep -E "GONE|cannot|recorded" "$tmp/top.out" | head -5; }
kill -INT "$bpid"; wait "$bpid"

summary screens
