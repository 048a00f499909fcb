#!/bin/sh
# bench.sh -- lines/s and latency of each model at 1, 64 and 512
# connections, depth 1 and 16, 64-byte lines; then the board's overhead.
#
# The client and the server share this machine's cores, so the absolute
# figures say as much about the machine as about the model: compare rows
# and models measured in the same run, not numbers across runs.
set -eu
BIN=${1:-build/threadlab}
DURATION=${BENCH_DURATION:-3}
tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
pids=""
# SIGTERM, not SIGINT: sh starts background jobs with SIGINT ignored, and
# the peers do not block it as threadlab serve does (a blocked signal is
# never ignored, so sigwait still gets it).
trap 'for p in $pids; do kill -TERM $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT

# start NAME ARGS...: a server on a free port; sets $port.
start() {
  name=$1; shift
  "$BIN" serve "$@" --port 0 --port-file "$tmp/$name.port" >/dev/null 2>&1 &
  pids="$pids $!"
  spid=$!
  for _ in $(seq 50); do [ -s "$tmp/$name.port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/$name.port")
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # server CPU, 1/100 s
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$2"; }

# load PORT CONNS DEPTH OUT: one run; --timeout long enough for connections
# that wait in a pool's queue for the whole run.
load() {
  threads=$([ "$2" -gt 1 ] && echo 2 || echo 1)
  "$BIN" load "127.0.0.1:$1" --conns "$2" --depth "$3" --size 64 \
      --duration "$DURATION" --threads "$threads" --timeout 60 --json >"$4" 2>/dev/null || true
}

PEERS=${2:-build/peers}
echo "threadlab bench: 64-byte lines, ${DURATION}s per row, $(nproc) cores shared by client and server"
echo "$(uname -srm), $(date -u +%Y-%m-%dT%H:%MZ)"

# A free loopback port for a peer (peers take a port, they cannot pick one):
# below the kernel's ephemeral range, so that no client socket of ours can
# be holding it.
free_port() {
  low=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
  low=${low:-32768}
  while :; do
    p=$((10000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % (low - 10000)))
    ss -ltnaH 2>/dev/null | grep -q ":$p " || { echo "$p"; return; }
  done
}
# peer NAME BINARY THREADS: start a reference server; sets $port. Tries
# another port if it did not come up.
peer() {
  for _try in 1 2 3 4 5; do
    port=$(free_port)
    "$2" "$port" "$3" >/dev/null 2>&1 &
    ppid_=$!
    for _ in $(seq 30); do ss -ltnH 2>/dev/null | grep -q "127.0.0.1:$port " && break; sleep 0.1; done
    if ss -ltnH 2>/dev/null | grep -q "127.0.0.1:$port "; then
      pids="$pids $ppid_"
      return
    fi
    kill "$ppid_" 2>/dev/null
  done
  echo "bench: $1 did not start" >&2
}

# ---- every model and the reference servers, side by side -------------------
: >"$tmp/results"
configs="bio:bio pool:pool_--min_4_--max_1024 reactor:reactor multi-w4:multireactor multi-w2:multireactor_--workers_2"
[ -x "$PEERS/uv_echo" ] && configs="$configs peer-uv-1:uv:1 peer-uv-2:uv:2"
[ -x "$PEERS/ev_echo" ] && configs="$configs peer-ev-1:ev:1 peer-ev-2:ev:2"
for spec in $configs; do
  label=${spec%%:*}
  rest=${spec#*:}
  case "$label" in
    peer-uv-*) peer "$label" "$PEERS/uv_echo" "${rest#uv:}" ;;
    peer-ev-*) peer "$label" "$PEERS/ev_echo" "${rest#ev:}" ;;
    # shellcheck disable=SC2046
    *) start "$label" $(echo "$rest" | tr _ ' ') ;;
  esac
  for conns in 1 64 512 1000; do
    for depth in 1 16; do
      load "$port" "$conns" "$depth" "$tmp/out"
      echo "$label $conns $depth $(field lines_per_s "$tmp/out") $(field p50 "$tmp/out") \
$(field p99 "$tmp/out") $(field 'p99\.9' "$tmp/out") $(field max "$tmp/out") \
$(field errors_total "$tmp/out")" >>"$tmp/results"
    done
  done
done
echo
echo "every model and reference echo servers (libuv, libevent; -1: one loop, -2: two"
echo "loops on SO_REUSEPORT listeners), same load generator, same run."
echo "vs_peer: lines/s divided by the best peer's in that row; p99_vs: p99 divided by"
echo "that peer's p99 (under 1.00 is better)."
awk '
  { key = $2 " " $3; rows[NR] = $0
    if ($1 ~ /^peer-/ && $4 > best[key]) { best[key] = $4; bestp99[key] = $6; bestname[key] = $1 } }
  END {
    printf "%-10s %-5s %-5s %10s %9s %9s %10s %10s %6s %8s %7s\n", "model", "conns", "depth", "lines/s", "p50_us", "p99_us", "p99.9_us", "max_us", "errors", "vs_peer", "p99_vs"
    for (i = 1; i <= NR; i++) {
      split(rows[i], f, " "); key = f[2] " " f[3]
      ratio = best[key] > 0 ? sprintf("%.2f", f[4] / best[key]) : "-"
      p99r = bestp99[key] > 0 ? sprintf("%.2f", f[6] / bestp99[key]) : "-"
      printf "%-10s %-5s %-5s %10.0f %9.0f %9.0f %10.0f %10.0f %6s %8s %7s\n", f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], ratio, p99r
    }
    print ""
    for (k in best) printf "best peer at %s (conns depth): %s\n", k, bestname[k]
  }' "$tmp/results"
[ -x "$PEERS/uv_echo" ] && [ -x "$PEERS/ev_echo" ] || \
  echo "(a peer is missing: apt-get install libuv1-dev libevent-dev, then make bench)"
echo "servers: $BIN serve bio | pool --min 4 --max 1024 | reactor | multireactor [--workers 2];"
echo "         $PEERS/uv_echo PORT N | $PEERS/ev_echo PORT N (tests/bench/peers/)"
echo "each row: $BIN load 127.0.0.1:PORT --conns C --depth D --size 64 --duration $DURATION --threads (1 for one conn, else 2) --timeout 60 --json"

# ---- a slow handler: 1% of lines are !sleep 5 --------------------------------
echo
echo "slow handler: 64 conns, depth 1, 64-byte lines, 1% of lines \"!sleep 5\", ${DURATION}s"
printf '%-14s %10s %9s %9s %10s %10s %6s\n' model lines/s p50_us p99_us p99.9_us max_us errors
for spec in "bio:bio" "pool-max1024:pool --min 4 --max 1024" "reactor:reactor" "reactor-off4:reactor --offload 4"; do
  label=${spec%%:*}
  # shellcheck disable=SC2086
  start "slow-$label" ${spec#*:}
  "$BIN" load "127.0.0.1:$port" --conns 64 --depth 1 --size 64 --mix sleep=5:1 \
      --duration "$DURATION" --threads 2 --timeout 60 --json >"$tmp/out" 2>/dev/null || true
  printf '%-14s %10.0f %9.0f %9.0f %10.0f %10.0f %6s\n' "$label" \
    "$(field lines_per_s "$tmp/out")" "$(field p50 "$tmp/out")" \
    "$(field p99 "$tmp/out")" "$(field 'p99\.9' "$tmp/out")" \
    "$(field max "$tmp/out")" "$(field errors_total "$tmp/out")"
done
echo "each row: $BIN load 127.0.0.1:PORT --conns 64 --depth 1 --size 64 --mix sleep=5:1 --duration $DURATION --threads 2 --json"
echo "the single reactor sleeps on its only loop: every connection waits for every !sleep."

# ---- the board's cost ---------------------------------------------------------
# Two BIO servers, one publishing its board and one with --no-board, loaded
# in turn (never at once) with the same workload, alternating, so that drift
# in the machine's speed hits both alike. Target: the board costs under 3%.
ROUNDS=${BENCH_ROUNDS:-6}
start board bio
bport=$port bpid=$spid
start noboard bio --no-board
nport=$port npid=$spid

# run PORT PID DEPTH OUT: a run, and the server's CPU ticks it took.
run() {
  t0=$(ticks "$2"); load "$1" 64 "$3" "$4"; t1=$(ticks "$2")
  echo $((t1 - t0)) >"$4.ticks"
}
echo
echo "board overhead: bio with its board vs --no-board, 64 conns, 64-byte lines,"
echo "${DURATION}s per run, $ROUNDS rounds per depth; odd rounds run the board first,"
echo "even rounds the other, so drift cancels. cpu_us/line is the server's CPU"
echo "time (utime+stime from /proc) per line answered."
printf '%-5s %-5s %12s %12s %7s %14s %14s\n' depth round board no-board ratio board_cpu_us/l noboard_cpu_us/l
for depth in 1 16; do
  sum_b=0 sum_n=0 cpu_b=0 cpu_n=0 lines_b=0 lines_n=0
  for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
      run "$bport" "$bpid" "$depth" "$tmp/b"; run "$nport" "$npid" "$depth" "$tmp/n"
    else
      run "$nport" "$npid" "$depth" "$tmp/n"; run "$bport" "$bpid" "$depth" "$tmp/b"
    fi
    b=$(field lines_per_s "$tmp/b"); n=$(field lines_per_s "$tmp/n")
    lb=$(field lines_ok "$tmp/b"); ln=$(field lines_ok "$tmp/n")
    tb=$(cat "$tmp/b.ticks"); tn=$(cat "$tmp/n.ticks")
    printf '%-5s %-5s %12.0f %12.0f %7.3f %14.2f %14.2f\n' "$depth" "$r" "$b" "$n" \
      "$(echo "$b $n" | awk '{print $1/$2}')" \
      "$(echo "$tb $lb" | awk '{print $1*10000/$2}')" "$(echo "$tn $ln" | awk '{print $1*10000/$2}')"
    sum_b=$(echo "$sum_b $b" | awk '{print $1+$2}'); sum_n=$(echo "$sum_n $n" | awk '{print $1+$2}')
    cpu_b=$((cpu_b + tb)); cpu_n=$((cpu_n + tn))
    lines_b=$((lines_b + lb)); lines_n=$((lines_n + ln))
  done
  echo "$sum_b $sum_n $ROUNDS $cpu_b $lines_b $cpu_n $lines_n $depth" | awk '{
    printf "%-5s mean  %12.0f %12.0f %7.3f %14.2f %14.2f   lines/s ratio; CPU per line ratio %.3f\n",
      $8, $1/$3, $2/$3, $1/$2, $4*10000/$5, $6*10000/$7, ($4/$5)/($6/$7) }'
done
echo "(ratio: board / no-board lines/s, 1.000 = free; CPU per line ratio: board /"
echo " no-board, 1.000 = free. The target is within 3%.)"
echo "servers: $BIN serve bio --port 0   and   $BIN serve bio --port 0 --no-board"
