#!/bin/sh
# run.sh -- the command line as a person uses it: --help everywhere, clear
# errors for bad flags, serve + load end to end, nc/socat as the client,
# a graceful stop on SIGTERM. Every step is bounded by `timeout`.
set -u
BIN=${THREADLAB_BIN:-build/threadlab}
tmp=$(mktemp -d)
server_pid=""
. "$(dirname "$0")/../lib.sh"
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# expect STATUS PATTERN -- CMD...: exit status and a line of output (stdout
# and stderr together) matching PATTERN.
expect() {
  want=$1 pattern=$2; shift 3
  timeout 30 "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" != "$want" ]; then
    bad "$* -> exit $got, wanted $want"; sed 's/^/    /' "$tmp/out" | head -5
  elif ! grep -q -- "$pattern" "$tmp/out"; then
    bad "$* -> output lacks '$pattern'"; sed 's/^/    /' "$tmp/out" | head -5
  else
    ok
  fi
}

echo "== tests/cli/run.sh ($BIN)"

# --help on every command, and the top level.
expect 0 "usage: threadlab COMMAND" -- "$BIN" --help
expect 0 "usage: threadlab serve MODEL" -- "$BIN" serve --help
expect 0 "usage: threadlab serve MODEL" -- "$BIN" serve bio --help
expect 0 "usage: threadlab load HOST:PORT" -- "$BIN" load --help
expect 0 "threadlab " -- "$BIN" --version

# Every command's --help is checked against its option table (cli_options.c):
# an option missing from the help, or a help line naming no option, fails
# here with exit 1.
for cmd in serve "serve bio" load top demo compare sim "sim bio" "sim quiz" calibrate replay; do
  # shellcheck disable=SC2086
  expect 0 "usage: threadlab ${cmd%% *}" -- "$BIN" $cmd --help
done

# And in Chinese, for every command and the top level: --lang zh after
# --help or before it (also where the command has no --lang of its own),
# or a zh LANG. Each is checked against the option table as the English
# is (exit 0), names the English help's options, and fits 80 columns of
# display width (a Chinese character takes two). English only before.
help_opts() { grep -o -- '--[a-z][a-z-]*' | sort -u; }
for cmd in "" serve "serve bio" load top demo compare sim calibrate replay; do
  # shellcheck disable=SC2086
  "$BIN" $cmd --help | help_opts >"$tmp/help.en"
  for how in after before env; do
    [ -z "$cmd" ] && [ "$how" = before ] && continue   # threadlab --lang is no command
    # shellcheck disable=SC2086
    case $how in
      after) "$BIN" $cmd --help --lang zh ;;
      before) "$BIN" $cmd --lang zh --help ;;
      env) env -u LC_ALL -u LC_MESSAGES LANG=zh_CN.UTF-8 "$BIN" $cmd --help ;;
    esac >"$tmp/help.zh" 2>"$tmp/help.err"; st=$?
    wide=$(LC_ALL=C.UTF-8 wc -L <"$tmp/help.zh")
    if [ "$st" = 0 ] && grep -q "^用法：threadlab" "$tmp/help.zh" && [ "$wide" -le 80 ] \
       && help_opts <"$tmp/help.zh" | cmp -s - "$tmp/help.en"; then ok
    else
      bad "threadlab $cmd --help in Chinese ($how): exit $st, $wide columns"
      head -1 "$tmp/help.zh"; cat "$tmp/help.err"; help_opts <"$tmp/help.zh" | diff "$tmp/help.en" - | head -5
    fi
  done
done
LANG=C LC_ALL=C "$BIN" serve --help --lang en | grep -q "^usage: threadlab serve" && ok \
  || bad "serve --help --lang en is not English"

# Bad input: a clear message and exit status 2.
expect 2 "unknown command 'frobnicate'" -- "$BIN" frobnicate
expect 2 "usage: threadlab COMMAND" -- "$BIN"
expect 2 "unknown model 'bioo'; the models are: bio, pool, reactor, multireactor, vthread" -- "$BIN" serve bioo
expect 2 "name a model first" -- "$BIN" serve --port 1
expect 2 "unknown option '--bogus'" -- "$BIN" serve bio --bogus
expect 2 "'abc' is not a whole number" -- "$BIN" serve bio --port abc
expect 2 "70000 is out of range" -- "$BIN" serve bio --port 70000
expect 2 "--stack-kb: 1 is out of range" -- "$BIN" serve bio --stack-kb 1
expect 2 "give the server as HOST:PORT" -- "$BIN" load
expect 2 "is not HOST:PORT" -- "$BIN" load localhost
expect 2 "port '0' is not a number from 1 to 65535" -- "$BIN" load 127.0.0.1:0
expect 2 "'-3' is out of range\|-3 is out of range" -- "$BIN" load 127.0.0.1:1 --conns -3
expect 2 "needs a value" -- "$BIN" load 127.0.0.1:1 --conns
expect 2 "is not like cpu=US:PCT" -- "$BIN" load 127.0.0.1:1 --mix cpu=5
expect 2 "is not like cpu=US:PCT" -- "$BIN" load 127.0.0.1:1 --mix sleep=70000:1
expect 2 "add up to at most 100%" -- "$BIN" load 127.0.0.1:1 --mix cpu=60:60,task=50:50
expect 2 "is not like cpu=US:PCT" -- "$BIN" load 127.0.0.1:1 --mix task=10000001:5

expect 0 "usage: threadlab top" -- "$BIN" top --help
expect 2 "'sometimes' is not abort, caller-runs, discard-oldest or block" -- "$BIN" serve pool --reject sometimes
expect 2 "--min 9 is more than --max 8" -- "$BIN" serve pool --min 9 --max 8
expect 2 "--max: 0 is out of range" -- "$BIN" serve pool --max 0
expect 2 "--size: '10x5' is not WxH" -- "$BIN" top --size 10x5
expect 2 "--io-ratio: 0 is out of range" -- "$BIN" serve reactor --io-ratio 0
expect 2 "--offload: 'x' is not a whole number" -- "$BIN" serve reactor --offload x
expect 2 "--workers: 0 is out of range" -- "$BIN" serve multireactor --workers 0
expect 2 "at most five servers" -- "$BIN" top 1 2 3 4 5 6
expect 1 "no live board for '999999999'" -- "$BIN" top --plain 999999999

# The same errors, worded alike, from every command's table.
expect 2 "calibrate: unknown option '--bogus'" -- "$BIN" calibrate --bogus
expect 2 "calibrate: option '--out' needs a value" -- "$BIN" calibrate --out
expect 2 "calibrate: unknown option '-x'" -- "$BIN" calibrate -x
expect 2 "calibrate: unexpected argument 'now'" -- "$BIN" calibrate now
expect 2 "sim quiz: --seed: 'x' is not a whole number" -- "$BIN" sim quiz --seed x
expect 2 "sim quiz: --seed: -1 is out of range" -- "$BIN" sim quiz --seed -1
expect 2 "sim quiz: unexpected argument 'extra'" -- "$BIN" sim quiz extra
expect 2 "compare: --conns: 0 is out of range" -- "$BIN" compare --conns 0
expect 2 "compare: --duration: 0.5 is out of range" -- "$BIN" compare --duration 0.5
expect 2 "compare: --models: no model called 'nope'" -- "$BIN" compare --models bio,nope
expect 2 "compare: option '--csv' needs a value" -- "$BIN" compare --csv
expect 2 "compare: unexpected argument 'now'" -- "$BIN" compare now
expect 2 "demo: --interval: 1 is out of range" -- "$BIN" demo --interval 1
expect 2 "demo: option '--record' needs a value" -- "$BIN" demo --record
expect 2 "demo: unknown option '--bogus'" -- "$BIN" demo --bogus
expect 2 "replay: name the recording to play" -- "$BIN" replay
expect 2 "replay: unexpected argument 'b'" -- "$BIN" replay a b
expect 2 "replay: --size: '5x5' is not WxH" -- "$BIN" replay --size 5x5 f
expect 2 "replay: --speed: 100 is out of range" -- "$BIN" replay --speed 100 f
expect 2 "replay: --frame: 0 is out of range" -- "$BIN" replay --frame 0 f
expect 2 "top: --count: 0 is out of range" -- "$BIN" top --count 0
expect 2 "top: --interval: 5 is out of range" -- "$BIN" top --interval 5
expect 2 "top: option '--record' needs a value" -- "$BIN" top --record
expect 2 "load: option '-c' needs a value" -- "$BIN" load 127.0.0.1:1 -c
expect 2 "load: --conns: 'x' is not a whole number" -- "$BIN" load 127.0.0.1:1 -c x
expect 2 "load: unknown option '-x'" -- "$BIN" load -x 127.0.0.1:1
expect 2 "load: unexpected argument 'a'" -- "$BIN" load 127.0.0.1:1 a
expect 2 "sim: --cores: 0 is out of range" -- "$BIN" sim bio --cores 0
expect 2 "sim: --conns: 'x' is not a whole number" -- "$BIN" sim bio -c x
expect 2 "sim: option '--max' needs a value" -- "$BIN" sim bio --max
expect 2 "sim: unknown option '-q'" -- "$BIN" sim bio -q
expect 2 "sim: --plot: 'a.gif' must end in .png or .svg" -- "$BIN" sim bio --plot a.gif
expect 2 "sim: unexpected argument 'extra'" -- "$BIN" sim bio extra
expect 2 "serve: unknown option '-x'" -- "$BIN" serve bio -x
expect 2 "serve: unexpected argument 'extra'" -- "$BIN" serve bio --port 1 extra
expect 2 "serve: option '--port' needs a value" -- "$BIN" serve bio --port

# serve + load, end to end.
start_server serve bio
if [ -z "$port" ]; then
  bad "serve bio did not write its port"; cat "$tmp/serve.log"
  summary cli; exit 1
fi
expect 0 "listening on 127.0.0.1:$port" -- cat "$tmp/serve.log"
expect 0 "errors   none" -- "$BIN" load "127.0.0.1:$port" --conns 200 --lines 4000 --threads 2
expect 0 '"errors_total":0' -- "$BIN" load "127.0.0.1:$port" --conns 8 --lines 1000 --mix cpu=100:5,sleep=5:1,task=100:20 --json
expect 0 '"errors_total":0' -- "$BIN" load "127.0.0.1:$port" --conns 4 --rate 2000 --duration 1 --json
expect 1 '"line-too-long":4' -- "$BIN" load "127.0.0.1:$port" --conns 4 --size 70000 --lines 4 --json
# The load's threads sleep with no timer slack (they inherit the main
# thread's, the one /proc shows), so that an open loop's lines leave when
# they are due, not up to 50 us later (Linux's default). Awaited as
# events, not times: socat listens on a port the kernel picks and says
# which, and echoes (cat) what it accepts, so the load runs until killed;
# the load, which sets its slack before it connects, is started on it;
# socat says when it accepted the load's connection, and only then is
# /proc read. (socat's 60 s is a hang guard: a load that never
# connects ends socat, and its end ends the reads.) Reading another
# process's timer slack needs CAP_SYS_NICE, which a user who is not root
# lacks: then the check cannot be made (said, not counted).
mkfifo "$tmp/socat.said"
timeout 60 socat -d -d TCP-LISTEN:0,bind=127.0.0.1 EXEC:cat 2>"$tmp/socat.said" &
socat_pid=$!
exec 4<"$tmp/socat.said"
lport="" load_pid="" slack="" refused=""
while read -r said <&4; do
  case $said in *" listening on "*) lport=${said##*:}; break ;; esac
done
if [ -n "$lport" ]; then
  "$BIN" load "127.0.0.1:$lport" --conns 1 --rate 100 --duration 60 --no-progress >/dev/null 2>&1 &
  load_pid=$!
  while read -r said <&4; do
    case $said in *" accepting connection "*)
      slack=$(cat "/proc/$load_pid/timerslack_ns" 2>"$tmp/slack.err") ||
        { grep -q "not permitted" "$tmp/slack.err" && refused=yes; }
      break ;;
    esac
  done
  kill "$load_pid" 2>/dev/null; wait "$load_pid" 2>/dev/null
fi
exec 4<&-
kill "$socat_pid" 2>/dev/null; wait "$socat_pid" 2>/dev/null
if [ -n "$refused" ]; then
  echo "  skipped: /proc refuses to show another process's timer slack to $(id -un) (needs CAP_SYS_NICE)"
else
  [ "$slack" = 1 ] && ok || bad "load --rate: its timer slack is '$slack' ns, not 1 (socat's port: '$lport')"
fi

# A desktop's low soft fd limit does not cap a load: it raises it to the
# hard limit. When even the hard limit is too low, it says so and how to fix.
expect 0 "errors   none" -- sh -c "ulimit -Sn 128 && exec \"\$0\" load 127.0.0.1:$port --conns 300 --lines 3000" "$BIN"
expect 1 "hold only 128 (its hard limit): run .ulimit -n 364." -- sh -c "ulimit -n 128 && exec \"\$0\" load 127.0.0.1:$port --conns 300 --lines 3000" "$BIN"

# A client we did not write: nc.
printf 'typed in nc\n!who\n' | timeout 10 nc -q 1 127.0.0.1 "$port" >"$tmp/nc.out" 2>&1
expect 0 "^typed in nc$" -- cat "$tmp/nc.out"
expect 0 "^!who model=bio thread=conn-[0-9]* conn=[0-9]*$" -- cat "$tmp/nc.out"

# The same port twice: a clear error, exit 1.
expect 1 "cannot listen on 127.0.0.1:$port: Address already in use" -- "$BIN" serve bio --port "$port"

# The pool server end to end too, and top reading it.
bio_pid=$server_pid bio_port=$port
start_server pool pool --min 2 --max 8
pool_pid=$server_pid pport=$port
expect 0 "errors   none" -- "$BIN" load "127.0.0.1:$pport" --conns 8 --lines 800
expect 0 "task queue\|connections" -- "$BIN" top --plain --count 1 --interval 100 "$pool_pid"
expect 0 "watchdog" -- "$BIN" top --plain --count 1 --interval 100 pool
kill -INT "$pool_pid"; wait "$pool_pid"

# The reactor, with the blocked-loop checker speaking on stderr.
start_server reactor reactor --blocked-warn-ms 100
reactor_pid=$server_pid rport=$port
expect 0 "errors   none" -- "$BIN" load "127.0.0.1:$rport" --conns 50 --lines 2000
printf '!sleep 400\n' | timeout 10 nc -q1 127.0.0.1 "$rport" >/dev/null
expect 0 "loop reactor blocked for 0\.[0-9] s in one handler" -- cat "$tmp/reactor.log"
expect 0 "LOOP" -- "$BIN" top --plain --count 1 --interval 100 reactor
kill -INT "$reactor_pid"; wait "$reactor_pid"

# top --json: the board's counters agree with what the load generator did.
start_server counted reactor
counted_pid=$server_pid
expect 0 "errors   none" -- "$BIN" load "127.0.0.1:$port" --conns 7 --lines 1234
expect 0 '"accepted":7,"active":0,"closed":7,.*"lines":1234,' -- \
  "$BIN" top --json --count 1 --interval 100 "$counted_pid"
kill -TERM "$counted_pid"; wait "$counted_pid"

# The multi-reactor: !who names the worker loop, round robin.
start_server multi multireactor --workers 2
multi_pid=$server_pid mport=$port
printf '!who\n' | timeout 10 nc -q1 127.0.0.1 "$mport" >"$tmp/who1"
printf '!who\n' | timeout 10 nc -q1 127.0.0.1 "$mport" >"$tmp/who2"
expect 0 "^!who model=multireactor thread=worker-1 conn=1$" -- cat "$tmp/who1"
expect 0 "^!who model=multireactor thread=worker-2 conn=2$" -- cat "$tmp/who2"
expect 0 "errors   none" -- "$BIN" load "127.0.0.1:$mport" --conns 40 --depth 4 --lines 4000
kill -TERM "$multi_pid"; wait "$multi_pid"

# SIGTERM: a graceful stop, exit 0.
server_pid=$bio_pid port=$bio_port
kill -TERM "$server_pid"
if timeout 10 sh -c "while kill -0 $server_pid 2>/dev/null; do sleep 0.1; done"; then
  wait "$server_pid"; st=$?
  [ "$st" = 0 ] && ok || bad "serve exited $st after SIGTERM"
  expect 0 "stopped" -- cat "$tmp/serve.log"
else
  bad "serve did not stop within 10 s of SIGTERM"
fi
server_pid=""

# A second SIGTERM while the graceful stop waits (a line in !sleep 5000):
# exit at once.
start_server second bio
second_pid=$server_pid
(printf '!sleep 5000\n' | timeout 10 nc -q 8 127.0.0.1 "$port" >/dev/null 2>&1 &)
sleep 0.3
kill -TERM "$second_pid"
sleep 0.3
kill -TERM "$second_pid"
if timeout 2 sh -c "while kill -0 $second_pid 2>/dev/null; do sleep 0.05; done"; then
  ok
  expect 0 "again, exiting at once" -- cat "$tmp/second.log"
else
  bad "a second SIGTERM did not exit at once"
  kill -9 "$second_pid"
fi
wait "$second_pid" 2>/dev/null

# Nobody listening now: load says so and fails.
expect 1 "could not connect to 127.0.0.1:$port" -- "$BIN" load "127.0.0.1:$port" --lines 10 --timeout 2

# A server that never answers: the run ends at --timeout with a clear error.
# (The port the server just gave up is free: nc listens there and reads.)
timeout 20 nc -l 127.0.0.1 "$port" >/dev/null 2>&1 &
ncpid=$!
for _ in $(seq 50); do ss -ltnH 2>/dev/null | grep -q "127.0.0.1:$port " && break; sleep 0.1; done
expect 1 "stopped answering" -- "$BIN" load "127.0.0.1:$port" --lines 10 --timeout 1
kill "$ncpid" 2>/dev/null

summary cli
