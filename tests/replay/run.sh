#!/bin/sh
# run.sh -- record and replay as a person uses them: top --record against
# a real server, sim --viz --record, replay in plain text (forward, one
# frame, backward) and in a real terminal (tmux: warnings, steps, the
# position on screen), and broken recordings refused.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
export THREADLAB_BOARD_DIR="$tmp/boards"
server_pid=""
. "$(dirname "$0")/../lib.sh"
cleanup() {
  tmux -S "$sock" kill-server 2>/dev/null
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
screen() { tmux -S "$sock" capture-pane -p -t replay; }

echo "== tests/replay/run.sh ($BIN)"
"$BIN" replay --help | grep -q "usage: threadlab replay FILE" && ok || bad "replay --help"
"$BIN" replay >"$tmp/out" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "name the recording" "$tmp/out" && ok || bad "replay with no file: exit $st"

# top --record against a real reactor that blocks now and then.
start_server rec reactor --blocked-warn-ms 50
"$BIN" load "127.0.0.1:$port" --conns 8 --duration 3 --mix sleep=80:2 --no-progress \
    >/dev/null 2>&1 &
lpid=$!
"$BIN" top --plain --count 6 --interval 400 --record "$tmp/real.tlr" "$server_pid" \
    >"$tmp/top.out" 2>"$tmp/top.err"
wait "$lpid"
kill -INT "$server_pid"; wait "$server_pid"; server_pid=""
grep -q "recorded $tmp/real.tlr" "$tmp/top.err" && ok || { bad "top did not say it recorded"; cat "$tmp/top.err"; }
"$BIN" replay "$tmp/real.tlr" --plain >"$tmp/fwd" 2>&1; st=$?
frames=$(grep -c '^--- frame' "$tmp/fwd")
[ "$st" = 0 ] && [ "$frames" -ge 6 ] && ok || bad "replay --plain: exit $st, $frames frames"
grep -Eq "^ ?>?reactor  pid [0-9]+" "$tmp/fwd" && ok || bad "the replay shows no reactor pane"
grep -q "blocked reactor blocked 0\.[0-9] s in one handler" "$tmp/fwd" && ok \
  || bad "the replay lost the blocked-loop events"
# Frame 3 alone is frame 3 of the whole; backward is forward reversed.
"$BIN" replay "$tmp/real.tlr" --plain --frame 3 >"$tmp/f3"
awk '/^--- frame 3 /{p=1} /^--- frame 4 /{p=0} p' "$tmp/fwd" | cmp -s - "$tmp/f3" && ok \
  || bad "--frame 3 differs from frame 3 of the whole replay"
# --at 0 is the first moment: one frame, the first (it printed every frame
# and the table, as if no --at were given).
"$BIN" replay "$tmp/real.tlr" --plain --at 0 >"$tmp/at0"
"$BIN" replay "$tmp/real.tlr" --plain --frame 1 | cmp -s - "$tmp/at0" && ok \
  || bad "--at 0 is not frame 1 alone: $(grep -c '^--- frame' "$tmp/at0") frames"
# A frame past the end is an error that says how many there are (it used
# to show the last frame without a word).
"$BIN" replay "$tmp/real.tlr" --plain --frame $((frames + 1)) >"$tmp/fpast" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "the recording has $frames frames" "$tmp/fpast" && \
  ! grep -q '^--- frame' "$tmp/fpast" && ok || { bad "--frame past the end: exit $st"; cat "$tmp/fpast"; }
"$BIN" replay "$tmp/real.tlr" --plain --backward >"$tmp/bwd"
awk '/^--- frame/{n++} {print n "\t" $0}' "$tmp/fwd" | sort -s -k1,1nr | cut -f2- >"$tmp/fwd.rev"
cmp -s "$tmp/fwd.rev" "$tmp/bwd" && ok || bad "backward is not forward reversed"

# A recording cut short plays its whole frames and says where it was cut;
# a changed byte is refused with the reason, exit 1.
size=$(wc -c <"$tmp/real.tlr")
head -c $((size / 2)) "$tmp/real.tlr" >"$tmp/cut.tlr"
"$BIN" replay "$tmp/cut.tlr" --plain >"$tmp/out" 2>"$tmp/err"; st=$?
n=$(grep -c '^--- frame' "$tmp/out")
[ "$st" = 0 ] && [ "$n" -ge 1 ] && [ "$n" -lt "$frames" ] && ok \
  || bad "a cut recording: exit $st, $n of $frames frames"
grep -q "cut short at byte [0-9]* of $((size / 2)), after frame $n " "$tmp/err" && ok \
  || { bad "a cut recording does not say where it was cut"; cat "$tmp/err"; }
cp "$tmp/real.tlr" "$tmp/flip.tlr"
byte=$(od -An -tu1 -j $((size / 2)) -N1 "$tmp/real.tlr")      # changed, whatever it was
printf "\\$(printf %o $(((byte + 1) % 256)))" | dd of="$tmp/flip.tlr" bs=1 seek=$((size / 2)) \
    conv=notrunc 2>/dev/null
cmp -s "$tmp/real.tlr" "$tmp/flip.tlr" && bad "the test did not change a byte"
"$BIN" replay "$tmp/flip.tlr" --plain >"$tmp/out" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "corrupt" "$tmp/out" && ok || bad "a changed byte: exit $st"
printf 'not a recording' >"$tmp/junk.tlr"
"$BIN" replay "$tmp/junk.tlr" >"$tmp/out" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "not a threadlab recording" "$tmp/out" && ok || bad "junk: exit $st"
"$BIN" replay "$tmp/nonexistent.tlr" >"$tmp/out" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "No such file" "$tmp/out" && ok || bad "a missing file: exit $st"

# Every stop signal finishes the recording (top --plain --record): it
# replays whole. A kill -9 cannot finish it: it replays cut short, saying so.
start_server sig bio
# frames_in FILE: the whole frames a (maybe unfinished) recording holds now.
frames_in() { "$BIN" replay "$1" --plain 2>/dev/null | grep -c '^--- frame'; }
for sig in INT TERM HUP KILL; do
  "$BIN" top --plain --interval 100 --record "$tmp/$sig.tlr" "$server_pid" \
      >/dev/null 2>"$tmp/$sig.err" &
  tpid=$!
  for _ in $(seq 300); do [ "$(frames_in "$tmp/$sig.tlr")" -ge 3 ] && break; sleep 0.1; done
  kill -"$sig" "$tpid"
  if timeout 10 sh -c "while kill -0 $tpid 2>/dev/null; do sleep 0.05; done"; then
    wait "$tpid"; st=$?
  else
    st=hung; kill -9 "$tpid"; wait "$tpid"
  fi
  "$BIN" replay "$tmp/$sig.tlr" --plain >"$tmp/$sig.out" 2>"$tmp/$sig.rerr"; rst=$?
  n=$(grep -c '^--- frame' "$tmp/$sig.out")
  if [ "$sig" = KILL ]; then
    [ "$rst" = 0 ] && [ "$n" -ge 3 ] && grep -q "cut short at byte" "$tmp/KILL.rerr" && ok \
      || { bad "after kill -9: replay exit $rst, $n frames"; cat "$tmp/KILL.rerr"; }
  else
    [ "$st" = 0 ] && grep -q "recorded $tmp/$sig.tlr ([0-9]* frames" "$tmp/$sig.err" && ok \
      || { bad "top --record stopped by SIG$sig: exit $st"; cat "$tmp/$sig.err"; }
    [ "$rst" = 0 ] && [ "$n" -ge 3 ] && [ ! -s "$tmp/$sig.rerr" ] && ok \
      || { bad "SIG$sig: the recording is not whole (replay exit $rst, $n frames)"; cat "$tmp/$sig.rerr"; }
  fi
done
kill -INT "$server_pid"; wait "$server_pid"; server_pid=""

# A path that cannot be written is refused before anything is watched.
"$BIN" top --plain --count 1 --record /dev/full >"$tmp/out" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "No space left on device" "$tmp/out" && ok \
  || { bad "top --record /dev/full: exit $st"; cat "$tmp/out"; }

# sim --viz --record, replayed: one frame per event, each with the
# screen's "next:" line, so replay steps the run event by event (it used
# to hold one frame per screen refresh, without the line).
"$BIN" sim reactor --conns 2 --duration 0.0005 --viz --speed 0.001 --record "$tmp/sim.tlr" \
    >/dev/null 2>"$tmp/sim.err"
"$BIN" replay "$tmp/sim.tlr" --plain >"$tmp/simfwd" 2>&1
grep -q "sim:reactor  pid" "$tmp/simfwd" && ok || bad "the simulated run's recording does not replay"
events=$(sed -n 's/.*recorded .* (\([0-9]*\) events.*/\1/p' "$tmp/sim.err")
simframes=$(grep -c '^--- frame' "$tmp/simfwd")
[ -n "$events" ] && [ "$events" -ge 20 ] && [ "$simframes" = "$events" ] && ok \
  || { bad "sim --record: $simframes frames for ${events:-no} events"; cat "$tmp/sim.err"; }
# Frame k is the screen before event k: "event k-1 ... next: ...".
steps=$(grep -o 'event [0-9]*  speed [^ ]*  *[A-Z]*  *next: ' "$tmp/simfwd" | head -20 \
        | awk '{ if ($2 != NR - 1) bad = 1 } END { print NR, !bad }')
[ "$steps" = "20 1" ] && ok || bad "sim --record frames are not one event each: $steps"
grep -q 'FINISHED' "$tmp/simfwd" && ok || bad "the sim recording does not end FINISHED"
grep -q 'up 0\.000[0-9]*s' "$tmp/simfwd" && ok || bad "up is not in simulated time"

# A recording path that cannot be written fails before the run; the
# viz options without --viz are refused.
"$BIN" sim reactor --conns 2 --duration 0.0005 --viz --record /dev/full </dev/null \
    >"$tmp/out" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "cannot write: No space left on device" "$tmp/out" && ok \
  || { bad "sim --viz --record /dev/full: exit $st"; cat "$tmp/out"; }
"$BIN" sim reactor --conns 2 --start-paused >"$tmp/out" 2>&1; st=$?
[ "$st" = 2 ] && grep -q "start-paused goes with --viz" "$tmp/out" && ok \
  || bad "--start-paused without --viz: exit $st"

# An old recording (version 2) is refused with its version named.
cp "$tmp/sim.tlr" "$tmp/v2.tlr"
printf '\002' | dd of="$tmp/v2.tlr" bs=1 seek=8 conv=notrunc 2>/dev/null
"$BIN" replay "$tmp/v2.tlr" --plain >"$tmp/out" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "a recording of version 2; this threadlab reads version 3" "$tmp/out" \
  && ok || { bad "a version 2 file: exit $st"; cat "$tmp/out"; }

# The demo's table is the recording's ending: replay ends as the demo did.
"$BIN" demo --models reactor --scenario steady --duration 1 --plain --interval 300 \
    --record "$tmp/demo.tlr" >"$tmp/demo.out" 2>"$tmp/demo.err"
grep -q "recorded $tmp/demo.tlr ([0-9]* frames and the table" "$tmp/demo.err" && ok \
  || { bad "demo --record did not say it recorded the table"; cat "$tmp/demo.err"; }
"$BIN" replay "$tmp/demo.tlr" --plain >"$tmp/demo.replay" 2>&1
sed -n '/^scenario steady:/,$p' "$tmp/demo.out" >"$tmp/demo.table"
[ -s "$tmp/demo.table" ] && tail -n "$(wc -l <"$tmp/demo.table")" "$tmp/demo.replay" \
  | cmp -s - "$tmp/demo.table" && ok || bad "the replay does not end with the demo's table"
grep -q '^\[steady\] ' "$tmp/demo.replay" && ok || bad "the replay lost the demo's narrator"
last=$(grep -c '^--- frame' "$tmp/demo.replay")
# A recording holds its narrator and table in both languages: made in
# English, it replays in Chinese (it kept the English before), the table
# as demo --lang zh prints it; the sim's next: line too.
"$BIN" replay "$tmp/demo.tlr" --plain --lang zh >"$tmp/demo.zh" 2>&1
grep -q '^\[steady\] 数一数线程：' "$tmp/demo.zh" && ok \
  || bad "replay --lang zh: the narrator is not Chinese: $(grep '^\[steady' "$tmp/demo.zh" | head -1)"
sed -n '/^场景 steady：/,$p' "$tmp/demo.zh" >"$tmp/demo.zh.table"
grep -q '^模型 ' "$tmp/demo.zh.table" && tail -1 "$tmp/demo.zh" | grep -q '^ threadlab compare' \
  && ok || bad "replay --lang zh does not end with the Chinese table: $(tail -3 "$tmp/demo.zh")"
"$BIN" replay "$tmp/sim.tlr" --plain --lang zh --frame 3 | grep -q '^\[模拟 reactor\] .*下一个：' \
  && ok || bad "replay --lang zh: the sim's next: line is not Chinese"
"$BIN" replay "$tmp/demo.tlr" --plain --frame "$last" | grep -q "THE END: q prints the table" \
  && ok || bad "the last frame of a demo's replay does not say the table follows"

# --cast: the demo's recording as asciicast v2 (tests/replay/asciicast.awk
# checks the format and decodes it), its frames and table what --plain
# prints, each at its recorded time; the checker itself refuses a file
# of another version and a string with a raw control character.
cast_awk="$(dirname "$0")/asciicast.awk"
"$BIN" replay "$tmp/demo.tlr" --cast "$tmp/demo.cast" --size 100x30 2>"$tmp/cast.err"; st=$?
[ "$st" = 0 ] && grep -q "wrote $tmp/demo.cast (asciicast v2, $last frames, 100x30)" "$tmp/cast.err" \
  && ok || { bad "replay --cast: exit $st"; cat "$tmp/cast.err"; }
head -1 "$tmp/demo.cast" | grep -q '^{"version": 2, "width": 100, "height": 30,' && ok \
  || bad "the cast's header: $(head -1 "$tmp/demo.cast")"
[ "$(($(wc -l <"$tmp/demo.cast") - 1))" = $((last + 1)) ] && ok \
  || bad "the cast has $(($(wc -l <"$tmp/demo.cast") - 1)) events, not $last frames and the table"
"$BIN" replay "$tmp/demo.tlr" --plain --size 100x30 | grep -v '^--- frame' >"$tmp/demo.plain100"
awk -f "$cast_awk" "$tmp/demo.cast" >"$tmp/demo.cast.txt" 2>"$tmp/cast.bad" && \
  cmp -s "$tmp/demo.cast.txt" "$tmp/demo.plain100" && ok \
  || { bad "the cast is not valid asciicast v2 or its frames differ from --plain"; cat "$tmp/cast.bad"; \
       diff "$tmp/demo.cast.txt" "$tmp/demo.plain100" | head -5; }
# Each frame at its recorded time, from the first frame's.
"$BIN" replay "$tmp/demo.tlr" --plain | sed -n 's/^--- frame [0-9]* t=\([0-9.]*\)s ---$/\1/p' >"$tmp/plain.t"
sed -n '2,$s/^\[\([0-9.]*\),.*/\1/p' "$tmp/demo.cast" | head -n "$last" >"$tmp/cast.t"
awk 'NR == FNR { t[FNR] = $1; next } FNR == 1 { t0 = t[1] }
     { d = t[FNR] - t0 - $1; if (d > 0.0011 || d < -0.0011) bad = 1 } END { exit bad }' \
  "$tmp/plain.t" "$tmp/cast.t" && [ "$(wc -l <"$tmp/cast.t")" = "$last" ] && ok \
  || bad "the cast's times are not the frames' recorded times"
sed '1s/"version": 2/"version": 1/' "$tmp/demo.cast" | awk -f "$cast_awk" >/dev/null 2>&1 \
  && bad "the checker took a version 1 header" || ok
sed '2s/\\r\\n/\t/' "$tmp/demo.cast" | awk -f "$cast_awk" >/dev/null 2>&1 \
  && bad "the checker took a raw control character" || ok
"$BIN" replay "$tmp/demo.tlr" --cast "$tmp/no/such/dir.cast" >"$tmp/cast.err" 2>&1; st=$?
[ "$st" = 1 ] && grep -q "^threadlab replay: --cast $tmp/no/such/dir.cast: No such file" "$tmp/cast.err" \
  && ok || { bad "--cast to a path that cannot be written: exit $st"; cat "$tmp/cast.err"; }

# In a terminal: the position on screen; w jumps to a warning; -> and <- step.
command -v tmux >/dev/null || { echo "  FAIL: tmux is not installed"; exit 1; }
tmux -S "$sock" new-session -d -s replay -x 160 -y 45 \
  "env TERM=xterm-256color $BIN replay $tmp/real.tlr --speed 0.25; sleep 30"
sleep 1
tmux -S "$sock" send-keys -t replay g
sleep 0.4
screen | grep -q "^\[replay\] frame 1/$frames  t=0.0s" && ok || bad "g did not go to frame 1: $(screen | grep '^\[replay')"
# w stops where a warning starts, never on a frame where the same loop
# just goes on warning: the frames marked NEW in the text replay, in turn,
# after frame 1, where g left us (w goes forward; a recording made on a
# loaded machine can start with a warning on frame 1 itself).
starts=$(awk '/^--- frame/ { f = $3 } /NEW WARNING here/ && f + 0 > 1 { print f }' "$tmp/fwd" | uniq | head -2)
first=$(echo "$starts" | sed -n 1p); second=$(echo "$starts" | sed -n 2p)
# wait_frame N: until the bottom line says frame N (up to 10 s; a busy
# machine redraws late).
wait_frame() {
  for _ in $(seq 40); do screen | grep '^\[replay' | grep -q "frame $1/" && return 0; sleep 0.25; done
  return 1
}
tmux -S "$sock" send-keys -t replay w
[ -n "$first" ] && wait_frame "$first" && ok || bad "w did not go to frame $first, the first new warning: $(screen | grep '^\[replay')"
line=$(screen | grep '^\[replay')
echo "$line" | grep -q "PAUSED  NEW WARNING here" && ok || bad "w did not stop on a warning: $line"
at=$(echo "$line" | sed -n 's/.*frame \([0-9]*\)\/.*/\1/p')
if [ -n "$second" ]; then
  tmux -S "$sock" send-keys -t replay w
  wait_frame "$second" && ok \
    || bad "a second w did not go to the next new warning (frame $second): $(screen | grep '^\[replay')"
  tmux -S "$sock" send-keys -t replay g w
  wait_frame "$first" || bad "g w did not return to frame $first"
fi
tmux -S "$sock" send-keys -t replay Right
sleep 0.4
screen | grep -q "frame $((at + 1))/$frames" && ok || bad "-> did not step one frame on"
tmux -S "$sock" send-keys -t replay Left
sleep 0.4
screen | grep '^\[replay' | grep -q "frame $at/$frames" && ok || bad "<- did not step back"
tmux -S "$sock" send-keys -t replay q
sleep 0.5
screen | grep -q '^\[replay' && bad "q did not end the replay" || ok

# In a terminal, --at 0 holds the first frame, paused (it played on).
tmux -S "$sock" new-session -d -s at0 -x 160 -y 45 \
  "env TERM=xterm-256color $BIN replay $tmp/real.tlr --at 0; sleep 30"
at0line() { tmux -S "$sock" capture-pane -p -t at0 | grep '^\[replay'; }
for _ in $(seq 40); do at0line | grep -q frame && break; sleep 0.25; done
sleep 1
at0line | grep -q "frame 1/$frames  t=0.0s.*PAUSED" && ok \
  || bad "replay --at 0 is not paused on frame 1: $(at0line)"
tmux -S "$sock" kill-session -t at0

# sim --viz keys: --start-paused holds event 0; 210 s in one burst go on
# 210 events, then 201 b in one burst go back 201 (the old b went back 2:
# each press went back from the same place); e runs on to the next event
# of the kind that happened last (here: the next assign).
tmux -S "$sock" new-session -d -s sim -x 160 -y 45 \
  "env TERM=xterm-256color $BIN sim multireactor --cores 4 --conns 4 --duration 0.05 --viz --start-paused; sleep 30"
simline() { tmux -S "$sock" capture-pane -p -t sim | grep '^\[sim'; }
wait_event() {   # wait_event N: until the status line says event N (up to 90 s: under
                 # TSan, 200 steps back are 200 runs of the simulation again)
  for _ in $(seq 360); do simline | grep -q "event $1  " && return 0; sleep 0.25; done
  return 1
}
wait_screen() {  # wait_screen TEXT: until the screen shows it (up to 10 s)
  for _ in $(seq 40); do
    tmux -S "$sock" capture-pane -p -t sim | grep -qF -- "$1" && return 0; sleep 0.25
  done
  return 1
}
wait_event 0 && simline | grep -q "PAUSED" && ok || bad "--start-paused: $(simline)"
sleep 1
simline | grep -q "event 0  " && ok || bad "--start-paused did not stay paused: $(simline)"
tmux -S "$sock" send-keys -t sim $(printf 's %.0s' $(seq 210))
wait_event 210 && ok || bad "210 s pressed: $(simline)"
tmux -S "$sock" send-keys -t sim $(printf 'b %.0s' $(seq 201))
wait_event 9 && ok || bad "201 b pressed in a burst did not go back 201 events: $(simline)"
# Events 9, 11, 19 and 27 assign the four connections, one each: at event
# 9 one is assigned, and e runs on to just past the second.
simline | grep -q "e next assign" && ok || bad "after an assign: $(simline)"
tmux -S "$sock" send-keys -t sim e
wait_event 11 && ok || bad "e did not stop after the next assign: $(simline)"
# The status line is drawn at every key, the panes at each refresh (200
# ms): wait for the panes; paused there, the third assign never comes.
wait_screen "conn 2 -> worker-2" && ! tmux -S "$sock" capture-pane -p -t sim \
  | grep -q "conn 3 -> worker-3" && ok || bad "e did not stop right after the next assign: $(simline)"
# Two e in one burst: two assigns on (each press counts, as with b).
tmux -S "$sock" send-keys -t sim b
wait_event 10 || bad "b: $(simline)"
tmux -S "$sock" send-keys -t sim e e
wait_event 19 && wait_screen "conn 3 -> worker-3" \
  && ok || bad "e e in a burst did not go on two assigns: $(simline)"
tmux -S "$sock" send-keys -t sim q
sleep 0.5

# The shipped recording of vthread's blocking lesson (make recording-pin):
# the first pane's monitor hands a stuck carrier to a spare and the spare
# retires; the second pane (--pin) shows a carrier held by its sleep
# longer than the handoff's 20 ms; the caption says which is which.
pin="$(dirname "$0")/../../recordings/vthread-pin.tlr"
"$BIN" replay "$pin" --plain --size 240x48 >"$tmp/pin" 2>&1; st=$?   # (reasons unwrapped)
[ "$st" = 0 ] && ok || { bad "replay $pin: exit $st"; tail -3 "$tmp/pin"; }
grep -Eq "carrier-[0-9]+ blocked in a call for [0-9]+ ms: handoff to" "$tmp/pin" \
  && grep -Eq "spare-[0-9]+: the blocking call on carrier-[0-9]+ returned; the spare" "$tmp/pin" && ok \
  || bad "vthread-pin.tlr holds no handoff to a spare and its retirement"
grep -Eq "[|] carrier-[0-9]+ .* BLOCKED 0\.[1-9]s" "$tmp/pin" && ok \
  || bad "vthread-pin.tlr: the pinned pane never shows a carrier BLOCKED 0.1 s or more"
grep -q "^\[vthread --pin\] 1% of lines sleep 200 ms" "$tmp/pin" && ok \
  || bad "vthread-pin.tlr has no caption"

summary replay
