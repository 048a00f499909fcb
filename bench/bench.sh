#!/bin/sh
# bench.sh -- every model against the best peer of its kind, and the board's
# cost, measured interleaved in one run.
#
#   bench/bench.sh [BIN [PEERS_DIR]]      (make bench builds both first)
#
# Kinds, and the peers each model is held against (tests/bench/peers/):
#   blocking  bio, pool      vs tp_echo: a naive thread-per-connection server
#   reactor   reactor        vs uv_echo 1 loop, ev_echo 1 loop
#   multi     multireactor   vs ev_echo with one loop per core (the
#                            multireactor with one worker loop per core too)
#   virtual   vthread        vs go_echo: Go's goroutine per connection, a
#                            listener and io.Copy (bench/go_echo.go; built
#                            when go is installed, else the table says so);
#                            one carrier per core, as Go has one P per core
# and vthread against the multireactor (its reactor of the same size), cell
# by cell, from the same runs.
# Cells: 1, 64 and 1000 connections x depth 1 and 16, 64-byte lines. In each
# cell and each repeat every server is loaded in turn, never two at once
# (peer, model, model --no-board, ...), and every other repeat runs the list
# backwards, so that a drift in the machine's speed hits peers and models
# alike. The client and the servers share this machine's cores: compare the
# ratios of one run, not absolute figures across runs or machines.
#
# Environment:
#   BENCH_DURATION=S   seconds per load run (default 3)
#   BENCH_REPEATS=N    repeats of every cell (default 2, at least 1)
#   BENCH_CELLS="C:D .."  cells to run (default "1:1 1:16 64:1 64:16 1000:1 1000:16")
#   BENCH_CLIENT_THREADS=N  load generator threads (default 1)
#   BENCH_QUICK=1      a smoke run: cell 64:16, 1 repeat, 1 s, no slow-handler table
#   BENCH_BASE=BIN     also run each model from BIN, a threadlab built from
#                      another commit (git worktree add /tmp/base REV &&
#                      make -C /tmp/base), each right after its twin from
#                      this tree: the table "this tree vs the base" is a
#                      before/after of a change, measured side by side
#   BENCH_SERVERS="L .."  only the servers with these labels (tp bio bio-nb
#                      pool ... as the tables name them; a model's base twin
#                      comes with it): fewer servers, more repeats
set -eu
BIN=${1:-build/threadlab}
PEERS=${2:-build/peers}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  DURATION=${BENCH_DURATION:-1} REPEATS=${BENCH_REPEATS:-1} CELLS=${BENCH_CELLS:-64:16}
else
  DURATION=${BENCH_DURATION:-3} REPEATS=${BENCH_REPEATS:-2}
  CELLS=${BENCH_CELLS:-"1:1 1:16 64:1 64:16 1000:1 1000:16"}
fi
CLIENT_THREADS=${BENCH_CLIENT_THREADS:-1}
# Values from the environment are checked, never trusted.
bad() { echo "bench: $1" >&2; exit 2; }
for v in "$REPEATS" "$CLIENT_THREADS"; do
  case $v in ''|*[!0-9]*) bad "not a whole number: '$v'" ;; esac
done
[ "$REPEATS" -ge 1 ] && [ "$REPEATS" -le 100 ] || bad "BENCH_REPEATS must be 1..100"
SERVERS=${BENCH_SERVERS:-}
for l in $SERVERS; do
  case " tp bio bio-nb pool pool-nb uv-1 ev-1 ev-$(nproc) reactor reactor-nb multi multi-nb go vthread vthread-nb " in
    *" $l "*) ;;
    *) bad "BENCH_SERVERS: no server is labelled '$l'" ;;
  esac
done
[ -z "${BENCH_BASE:-}" ] || [ -x "$BENCH_BASE" ] || bad "BENCH_BASE is not an executable threadlab: '$BENCH_BASE'"
[ "$CLIENT_THREADS" -ge 1 ] && [ "$CLIENT_THREADS" -le 64 ] || bad "BENCH_CLIENT_THREADS must be 1..64"
case $DURATION in ''|*[!0-9.]*|*.*.*|.) bad "BENCH_DURATION is seconds, not '$DURATION'" ;; esac
awk -v d="$DURATION" 'BEGIN { exit !(d > 0 && d <= 3600) }' || bad "BENCH_DURATION must be above 0 and at most 3600"
for c in $CELLS; do
  case $c in
    *[!0-9:]*|:*|*:|*:*:*|0*) bad "a cell is CONNS:DEPTH, not '$c'" ;;
    *:0*) bad "a cell's depth starts at 1, not '$c'" ;;
    *:*) [ "${c%%:*}" -le 10000 ] || bad "at most 10000 connections per cell, not '$c'" ;;
    *) bad "a cell is CONNS:DEPTH, not '$c'" ;;
  esac
done
[ -x "$BIN" ] || { echo "bench: no $BIN (run make)" >&2; exit 2; }
[ -x "$PEERS/tp_echo" ] || { echo "bench: no $PEERS/tp_echo (run make peers)" >&2; exit 2; }
CORES=$(nproc)
HZ=$(getconf CLK_TCK)

tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
pids="" load_pid=""
# SIGTERM, not SIGINT: sh starts background jobs with SIGINT ignored, and
# the peers do not block it as threadlab serve does (a blocked signal is
# never ignored, so sigwait still gets it).
# Under set -e a kill of a server that already ended would end the trap
# there, and the script with it, failing: hence the || true.
trap 'for p in $load_pid $pids; do kill -TERM $p 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# ---- servers -----------------------------------------------------------------

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
listening() { ss -ltnH 2>/dev/null | grep -q "127.0.0.1:$1 "; }

# start_model LABEL ARGS...: threadlab serve on a free port; sets port, spid.
# SERVE_BIN, when set, is the threadlab that serves (the base's).
start_model() {
  label=$1; shift
  "${SERVE_BIN:-$BIN}" serve "$@" --port 0 --port-file "$tmp/$label.port" >/dev/null 2>&1 &
  spid=$!
  pids="$pids $spid"
  for _ in $(seq 100); do [ -s "$tmp/$label.port" ] && break; sleep 0.1; done
  [ -s "$tmp/$label.port" ] || { echo "bench: $label did not start" >&2; exit 1; }
  port=$(cat "$tmp/$label.port")
}
# start_peer LABEL BINARY [ARGS]: a peer; tries another port if it did not
# come up (another process may have taken the port in between).
start_peer() {
  label=$1 peer_bin=$2; shift 2
  for _try in 1 2 3 4 5; do
    port=$(free_port)
    "$peer_bin" "$port" "$@" >/dev/null 2>&1 &
    spid=$!
    for _ in $(seq 30); do listening "$port" && break; sleep 0.1; done
    if listening "$port"; then pids="$pids $spid"; return; fi
    kill "$spid" 2>/dev/null || true
  done
  echo "bench: $label did not start" >&2
  exit 1
}

# Every server of the run, in $tmp/servers as LABEL KIND ROLE PORT PID.
# ROLE is peer, model, or noboard (the same model with --no-board; its
# board-on twin is the label without "-nb"). Models get --nodelay because
# every peer sets TCP_NODELAY. The command lines go to $tmp/commands.
: >"$tmp/servers"
: >"$tmp/commands"
# wanted LABEL: is LABEL in BENCH_SERVERS (or is that unset)?
wanted() { [ -z "$SERVERS" ] || case " $SERVERS " in *" $1 "*) true ;; *) false ;; esac; }
# model LABEL KIND ROLE ARGS...: start `threadlab serve ARGS` and record it;
# with BENCH_BASE, a model's twin from the base follows it (LABEL.base,
# kind "base", so that it stays out of the peer tables), so that the two
# always run one right after the other.
model() {
  m_label=$1 m_kind=$2 m_role=$3; shift 3
  wanted "$m_label" || return 0
  record_model "$m_label" "$m_kind" "$m_role" "$@"
  if [ "$m_role" = model ] && [ -n "${BENCH_BASE:-}" ]; then
    SERVE_BIN=$BENCH_BASE
    record_model "$m_label.base" base base "$@"
    SERVE_BIN=
  fi
}
record_model() {
  m_label=$1 m_kind=$2 m_role=$3; shift 3
  start_model "$m_label" "$@"
  # A server that could not publish its board still serves: without this
  # check its "board on" figures would silently be board-off ones.
  if [ "$m_role" = model ] && [ ! -f "$THREADLAB_BOARD_DIR/$spid.board" ]; then
    echo "bench: $m_label has no board in $THREADLAB_BOARD_DIR: the board's cost cannot be measured" >&2
    exit 1
  fi
  echo "$m_label $m_kind $m_role $port $spid" >>"$tmp/servers"
  echo "  $m_label: ${SERVE_BIN:-$BIN} serve $* --port 0" >>"$tmp/commands"
}
# peer LABEL KIND BINARY ARGS...: start a peer and record it.
peer() {
  p_label=$1 p_kind=$2 p_bin=$3; shift 3
  wanted "$p_label" || return 0
  start_peer "$p_label" "$p_bin" "$@"
  echo "$p_label $p_kind peer $port $spid" >>"$tmp/servers"
  echo "  $p_label: $p_bin PORT $*" >>"$tmp/commands"
}
peer  tp         blocking         "$PEERS/tp_echo"
model bio        blocking model   bio --nodelay
model bio-nb     blocking noboard bio --nodelay --no-board
model pool       blocking model   pool --min 4 --max 1024 --nodelay
model pool-nb    blocking noboard pool --min 4 --max 1024 --nodelay --no-board
[ -x "$PEERS/uv_echo" ] && peer uv-1 reactor "$PEERS/uv_echo" 1
if [ -x "$PEERS/ev_echo" ]; then
  peer ev-1       reactor "$PEERS/ev_echo" 1
  peer "ev-$CORES" multi  "$PEERS/ev_echo" "$CORES"
fi
model reactor    reactor model    reactor --nodelay
model reactor-nb reactor noboard  reactor --nodelay --no-board
# One worker loop per core, as the peer has: the default (two per core,
# Netty's) is for handlers that block, and an echo's never do, so like
# against like is the same number of loops.
model multi      multi   model    multireactor --workers "$CORES" --nodelay
model multi-nb   multi   noboard  multireactor --workers "$CORES" --nodelay --no-board
if [ -x "$PEERS/go_echo" ]; then
  peer go virtual "$PEERS/go_echo"
else
  echo "bench: no $PEERS/go_echo (apt-get install golang-go, then make bench): vthread has no Go peer in this run"
fi
model vthread    virtual model    vthread --carriers "$CORES" --nodelay
model vthread-nb virtual noboard  vthread --carriers "$CORES" --nodelay --no-board
# ---- one run -------------------------------------------------------------------

# Server CPU in clock ticks (utime + stime of the whole process, threads
# that have ended included, from /proc/PID/stat). /proc/PID/schedstat is
# finer (ns) but counts one thread only, and bio's threads end with their
# connections. Fields are counted after the ')' that ends field 2, the
# command name, which may hold spaces: utime and stime are then 12 and 13.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" "$2"; }

# run LABEL PORT PID CONNS DEPTH REPEAT: one load run, one line of results:
#   conns depth repeat label lines/s lines_ok cpu_ticks errors
run() {
  t0=$(ticks "$3")
  # In the background and waited for: sh runs a trap only once the
  # foreground command is done, but a signal interrupts `wait` at once.
  "$BIN" load "127.0.0.1:$2" --conns "$4" --depth "$5" --size 64 \
      --duration "$DURATION" --threads "$CLIENT_THREADS" --timeout 60 --json \
      >"$tmp/out" 2>/dev/null &
  load_pid=$!
  wait "$load_pid" || true
  load_pid=""
  t1=$(ticks "$3")
  lps=$(field lines_per_s "$tmp/out") ok=$(field lines_ok "$tmp/out")
  err=$(field errors_total "$tmp/out")
  echo "$4 $5 $6 $1 ${lps:-0} ${ok:-0} $((t1 - t0)) ${err:-1}" >>"$tmp/results"
}

echo "threadlab bench: 64-byte lines, ${DURATION}s per run, $REPEATS repeat(s), $CORES cores"
echo "shared by client ($CLIENT_THREADS load thread(s)) and server"
echo "$(uname -srm), $(date -u +%Y-%m-%dT%H:%MZ), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$tmp/results"
awk '{print $1, $4, $5}' "$tmp/servers" >"$tmp/order"
awk '{a[NR] = $0} END {for (i = NR; i >= 1; i--) print a[i]}' "$tmp/order" >"$tmp/order.rev"
for cell in $CELLS; do
  conns=${cell%%:*} depth=${cell#*:}
  for r in $(seq "$REPEATS"); do
    list="$tmp/order"; [ $((r % 2)) = 0 ] && list="$tmp/order.rev"
    while read -r label p pid; do
      run "$label" "$p" "$pid" "$conns" "$depth" "$r"
    done <"$list"
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- tables --------------------------------------------------------------------
# Per cell and server: the sums over repeats (lines, ticks, seconds) give
# lines/s and CPU us per line; min-max shows the spread of the repeats.
awk -v hz="$HZ" -v dur="$DURATION" '
  NR == FNR { kind[$1] = $2; role[$1] = $3; order[++n] = $1; if ($3 == "base") has_base = 1
              has_kind[$2] = 1; if ($3 == "noboard") has_noboard = 1; next }
  { key = $1 ":" $2 SUBSEP $4
    if (!(($1 ":" $2) in seen)) { seen[$1 ":" $2] = 1; cells[++nc] = $1 ":" $2 }
    runs[key]++; lps[key] += $5; ok[key] += $6; tk[key] += $7; err[key] += $8
    if ($3 > nrep) nrep = $3
    one_lps[key, $3] = $5; one_cpu[key, $3] = $6 > 0 ? $7 * 1e6 / hz / $6 : 0
    if (!(key in lo) || $5 < lo[key]) lo[key] = $5
    if (!(key in hi) || $5 > hi[key]) hi[key] = $5 }
  function cpu(k) { return ok[k] > 0 ? tk[k] * 1e6 / hz / ok[k] : 0 }
  # paired(A, B, WHAT): the ratio A/B of each repeat (lines/s or CPU per
  # line), the two servers having run one right after the other: "median
  # (min-max)" of the repeats, or "-".
  function paired(a, b, what,    r, m, i, j, x, v, q) {
    m = 0
    for (r = 1; r <= nrep; r++) {
      if (what == "lps") { x = one_lps[a, r]; v = one_lps[b, r] }
      else               { x = one_cpu[a, r]; v = one_cpu[b, r] }
      if (x > 0 && v > 0) q[++m] = x / v
    }
    if (m == 0) return "-"
    for (i = 2; i <= m; i++)
      for (j = i; j > 1 && q[j - 1] > q[j]; j--) { x = q[j]; q[j] = q[j - 1]; q[j - 1] = x }
    return sprintf("%.3f (%.2f-%.2f)", (m % 2 ? q[(m + 1) / 2] : (q[m / 2] + q[m / 2 + 1]) / 2), q[1], q[m])
  }
  function rate(k) { return runs[k] > 0 ? lps[k] / runs[k] : 0 }
  END {
    split("blocking reactor multi virtual", kinds, " ")
    split("bio and pool vs the naive thread-per-connection peer (tp)|the reactor vs libuv and libevent, one loop each (uv-1, ev-1)|the multireactor vs libevent with one loop per core|vthread vs Go, a goroutine per connection (go; targets at 64:16 and 1000:16: lines/s at least 1.00 x, CPU per line at most 1.00 x)", titles, "|")
    for (t = 1; t <= 4; t++) {
      K = kinds[t]
      if (!(K in has_kind)) continue         # BENCH_SERVERS left it out
      printf "\n%s: %s\n", K, titles[t]
      printf "%-10s %-11s %11s %19s %8s %9s %8s %6s  %s\n", "cell", "server", "lines/s", "min-max", "vs_best", "cpu_us/l", "vs_best", "errors", "best peer (lines/s, cpu)"
      for (c = 1; c <= nc; c++) {
        C = cells[c]; best = 0; bestc = 0; bn = "-"; bcn = "-"
        for (i = 1; i <= n; i++) {
          s = order[i]; k = C SUBSEP s
          if (kind[s] != K || role[s] != "peer" || !(k in runs)) continue
          if (rate(k) > best) { best = rate(k); bn = s }
          if (cpu(k) > 0 && (bestc == 0 || cpu(k) < bestc)) { bestc = cpu(k); bcn = s }
        }
        for (i = 1; i <= n; i++) {
          s = order[i]; k = C SUBSEP s
          if (kind[s] != K || !(k in runs)) continue
          r1 = best > 0 ? sprintf("%.2f", rate(k) / best) : "-"
          r2 = bestc > 0 && cpu(k) > 0 ? sprintf("%.2f", cpu(k) / bestc) : "-"
          printf "%-10s %-11s %11.0f %9.0f-%-9.0f %8s %9.3f %8s %6d  %s\n", C, s, rate(k), lo[k], hi[k], r1, cpu(k), r2, err[k], (role[s] == "peer" ? "" : bn ", " bcn)
        }
      }
    }
    if (has_noboard) {
    printf "\nthe board'"'"'s cost: each model with its board vs --no-board, same cells, same run\n"
    printf "%-10s %-8s %12s %12s %9s %12s %12s %9s\n", "cell", "model", "lines/s", "no-board", "ratio", "cpu_us/l", "no-board", "cpu_ratio"
    worst = 0
    for (c = 1; c <= nc; c++) {
      C = cells[c]
      for (i = 1; i <= n; i++) {
        s = order[i]; nb = s "-nb"; k = C SUBSEP s; kn = C SUBSEP nb
        if (role[s] != "model" || !(k in runs) || !(kn in runs)) continue
        cr = cpu(kn) > 0 ? cpu(k) / cpu(kn) : 0
        if (cr > worst) { worst = cr; wn = s " at " C }
        printf "%-10s %-8s %12.0f %12.0f %9.3f %12.3f %12.3f %9.3f\n", C, s, rate(k), rate(kn), (rate(kn) > 0 ? rate(k) / rate(kn) : 0), cpu(k), cpu(kn), cr
      }
    }
    printf "worst cpu_ratio: %.3f (%s); the target is at most 1.030\n", worst, wn
    }
    if (has_base) {
      printf "\nthis tree vs the base (BENCH_BASE): each model against the same model built\n"
      printf "from the base, same cells, same run, interleaved (target: lines/s and CPU per line within 5%%)\n"
      printf "%-10s %-8s %12s %12s %9s %12s %12s %9s\n", "cell", "model", "lines/s", "base", "ratio", "cpu_us/l", "base", "cpu_ratio"
      for (c = 1; c <= nc; c++) {
        C = cells[c]
        for (i = 1; i <= n; i++) {
          s = order[i]; k = C SUBSEP s; kb = C SUBSEP s ".base"
          if (role[s] != "model" || !(k in runs) || !(kb in runs)) continue
          printf "%-10s %-8s %12.0f %12.0f %9.3f %12.3f %12.3f %9.3f\n", C, s, rate(k), rate(kb), (rate(kb) > 0 ? rate(k) / rate(kb) : 0), cpu(k), cpu(kb), (cpu(kb) > 0 ? cpu(k) / cpu(kb) : 0)
        }
      }
    }
    # Paired by repeat: each model against the best peer of its kind (by
    # lines/s, as above) and against its base twin, repeat by repeat.
    printf "\npaired by repeat: each model against its kind'"'"'s best peer and its base, the ratio\n"
    printf "of every repeat (both ran in the same pass over the servers; a base twin right\n"
    printf "after its model): median (min-max) over %d repeat(s)\n", nrep
    printf "%-10s %-8s %-5s %22s %22s %22s %22s\n", "cell", "model", "peer", "lines/s vs peer", "cpu/l vs peer", "lines/s vs base", "cpu/l vs base"
    for (c = 1; c <= nc; c++) {
      C = cells[c]
      for (i = 1; i <= n; i++) {
        s = order[i]; k = C SUBSEP s; kb = C SUBSEP s ".base"
        if (role[s] != "model" || !(k in runs)) continue
        best = 0; bn = "-"
        for (j = 1; j <= n; j++) {
          p = order[j]; kp = C SUBSEP p
          if (kind[p] == kind[s] && role[p] == "peer" && (kp in runs) && rate(kp) > best) { best = rate(kp); bn = p }
        }
        kp = C SUBSEP bn
        printf "%-10s %-8s %-5s %22s %22s %22s %22s\n", C, s, bn,
          (bn == "-" ? "-" : paired(k, kp, "lps")), (bn == "-" ? "-" : paired(k, kp, "cpu")),
          ((kb in runs) ? paired(k, kb, "lps") : "-"), ((kb in runs) ? paired(k, kb, "cpu") : "-")
      }
    }
    if (!("virtual" in has_kind) || !("multi" in has_kind)) exit
    printf "\nvthread vs the multireactor (one carrier and one worker loop per core), same cells, same run\n"
    printf "(target at 1000:16: lines/s at least 0.90 x, CPU per line at most 1.15 x)\n"
    printf "%-10s %12s %12s %9s %12s %12s %9s\n", "cell", "vthread", "multi", "ratio", "cpu_us/l", "multi", "cpu_ratio"
    for (c = 1; c <= nc; c++) {
      C = cells[c]; kv = C SUBSEP "vthread"; km = C SUBSEP "multi"
      if (!(kv in runs) || !(km in runs)) continue
      printf "%-10s %12.0f %12.0f %9.3f %12.3f %12.3f %9.3f\n", C, rate(kv), rate(km), (rate(km) > 0 ? rate(kv) / rate(km) : 0), cpu(kv), cpu(km), (cpu(km) > 0 ? cpu(kv) / cpu(km) : 0)
    }
  }' "$tmp/servers" "$tmp/results"

echo
echo "vs_best: lines/s divided by the best peer's of its kind (over 1.00 is better);"
echo "cpu_us/l divided by the lowest peer CPU per line (under 1.00 is better). Server"
echo "CPU is utime+stime from /proc/PID/stat (1/$HZ s ticks) over the run; lines are"
echo "the load generator's verified lines (every byte checked, in order)."
echo "commands that made these tables (PORT: a free loopback port):"
cat "$tmp/commands"
echo "  each run: $BIN load 127.0.0.1:PORT --conns C --depth D --size 64 --duration $DURATION --threads $CLIENT_THREADS --timeout 60 --json"
echo "  cells (C:D): $CELLS; repeats: $REPEATS, odd ones in the order above, even ones reversed"
[ -x "$PEERS/uv_echo" ] && [ -x "$PEERS/ev_echo" ] || \
  echo "(a peer is missing: apt-get install libuv1-dev libevent-dev, then make bench)"
[ -x "$PEERS/go_echo" ] || echo "(no Go peer: apt-get install golang-go, then make bench)"
[ "${BENCH_QUICK:-0}" = 1 ] && exit 0

# ---- a slow handler: 1% of lines are !sleep 5 --------------------------------
echo
echo "slow handler: 64 conns, depth 1, 64-byte lines, 1% of lines \"!sleep 5\", ${DURATION}s"
# The latencies are the load's round trips (not the board's handling time).
printf '%-14s %10s %9s %9s %10s %10s %6s\n' model lines/s rt_p50_us rt_p99_us rt_p999_us rt_max_us errors
for spec in "bio:bio" "pool-max1024:pool --min 4 --max 1024" "reactor:reactor" "reactor-off4:reactor --offload 4" \
            "vthread:vthread" "vthread-pin:vthread --pin"; do
  label=${spec%%:*}
  # shellcheck disable=SC2086
  start_model "slow-$label" ${spec#*:}
  "$BIN" load "127.0.0.1:$port" --conns 64 --depth 1 --size 64 --mix sleep=5:1 \
      --duration "$DURATION" --threads 2 --timeout 60 --json >"$tmp/out" 2>/dev/null || true
  printf '%-14s %10.0f %9.0f %9.0f %10.0f %10.0f %6s\n' "$label" \
    "$(field lines_per_s "$tmp/out")" "$(field p50 "$tmp/out")" \
    "$(field p99 "$tmp/out")" "$(field 'p99\.9' "$tmp/out")" \
    "$(field max "$tmp/out")" "$(field errors_total "$tmp/out")"
  kill -TERM "$spid" 2>/dev/null || true
done
echo "each row: $BIN load 127.0.0.1:PORT --conns 64 --depth 1 --size 64 --mix sleep=5:1 --duration $DURATION --threads 2 --json"
echo "the single reactor sleeps on its only loop: every connection waits for every !sleep;"
echo "a 5 ms sleep ends before vthread's --handoff-ms (20): no carrier is handed to a spare, so"
echo "vthread waits as --pin does, like a loop per carrier (recordings/vthread-pin.tlr: 200 ms sleeps)."
