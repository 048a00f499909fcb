#!/bin/sh
# run.sh -- `compare --sweep` and `sim --sweep` as a person uses them: a
# real sweep of 2 models x 3 values (CSV of exactly 6 rows, a PNG made by
# gnuplot), the simulator over it with --overlay (both drawn), the CSV
# still written without gnuplot, Ctrl-C keeping the rows so far, and bad
# VAR, LIST or overlay files refused with one line and exit 2.
set -u
BIN=$(realpath "${THREADLAB_BIN:-build/threadlab}")
tmp=$(mktemp -d)
export THREADLAB_BOARD_DIR="$tmp/boards"
cpid=""
. "$(dirname "$0")/../lib.sh"
cleanup() {
  [ -n "$cpid" ] && kill -INT "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1

echo "== tests/sweep/run.sh ($BIN)"
command -v gnuplot >/dev/null || { echo "  FAIL: gnuplot is not installed (apt-get install gnuplot-nox)"; exit 1; }

# is_png FILE: the PNG signature and a 1400 x 1000 header, as the sweep asks gnuplot.
is_png() {
  [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] &&
  [ "$(od -An -tx1 -j16 -N8 "$1" | tr -d ' \n')" = 00000578000003e8 ]
}
# one_line_error FILE CMD: the error is one line naming the command (the
# next one, if any, is the project's pointer to --help).
one_line_error() {
  [ "$(grep -c "^threadlab $2: " "$1")" = 1 ] && [ "$(grep -vc '^(threadlab .* --help' "$1")" = 1 ]
}

# A real sweep: 2 models x 3 values, each point a second.
"$BIN" compare --models bio,reactor --sweep conns=1,2,4 --duration 1 \
    --csv real.csv --plot real.png >real.out 2>real.err; st=$?
[ "$st" = 0 ] && ok || { bad "compare --sweep: exit $st"; cat real.err; }
[ "$(wc -l <real.csv)" = 7 ] && ok || bad "the CSV has $(($(wc -l <real.csv) - 1)) rows, not 6"
# Each (model, value) once, with lines answered (lines/s above 0: on a
# busy machine a 1-second point may answer only a few).
for m in bio reactor; do
  for v in 1 2 4; do
    n=$(awk -F, -v m="$m" -v v="$v" '$1 == m && $3 == v && $4 == "real" && $5 > 0' real.csv | wc -l)
    [ "$n" = 1 ] && ok || { bad "$n rows with lines for $m at conns=$v, not 1"; cat real.csv; }
  done
done
is_png real.png && ok || bad "real.png is not the PNG gnuplot draws"
[ "$(grep -cE '^(bio|reactor) +[124] ' real.out)" = 6 ] && ok || bad "the table has not 6 rows"

# The simulator over the same values, the real points overlaid: both drawn.
"$BIN" sim all --cores 2 --duration 0.2 --sweep conns=1,2,4 --csv sim.csv \
    --overlay real.csv --plot both.svg >sim.out 2>sim.err; st=$?
[ "$st" = 0 ] && ok || { bad "sim --sweep --overlay: exit $st"; cat sim.err; }
[ "$(grep -c ',sim,' sim.csv)" = 15 ] && ok || bad "sim.csv has not 5 x 3 simulated rows"
for m in bio pool reactor multireactor vthread; do
  grep -q ">$m<" both.svg && ok || bad "no line for $m in the figure"
done
for m in bio reactor; do
  grep -q ">$m (real)<" both.svg && ok || bad "no real points of $m in the figure"
done
grep -q "pool (real)" both.svg && bad "real points of pool, which did not run" || ok
"$BIN" sim bio --duration 0.2 --sweep conns=1,2,4 --overlay real.csv --plot one.png \
    >/dev/null 2>&1 && is_png one.png && ok || bad "sim --sweep --plot PNG"

# The real points only where the two overlap: none past the lines' x range.
"$BIN" sim reactor --duration 0.2 --sweep conns=1,2 --overlay real.csv --plot near.svg \
    >/dev/null 2>&1
grep -q ">reactor (real)<" near.svg && ok || bad "no real reactor points at 1 and 2"
# gnuplot's SVG draws an open circle (pt 6) as a use of #gpPt5: 2 points
# in each of the 4 panels and the 4 keys' samples; the point at 4 is not.
circles=$(grep -c "href='#gpPt5' transform" near.svg)
[ "$circles" = 12 ] && ok || bad "$circles real points drawn, not 2 per panel (+ the keys)"

# Without gnuplot: how to install it, and the numbers still in a CSV.
PATH=/nonexistent "$BIN" sim bio --duration 0.2 --sweep conns=1,2 --plot nognu.png \
    >/dev/null 2>nognu.err; st=$?
[ "$st" = 1 ] && grep -q "apt-get install gnuplot-nox" nognu.err && ok \
  || { bad "no gnuplot: exit $st"; cat nognu.err; }
[ "$(grep -c ',sim,' nognu.csv 2>/dev/null)" = 2 ] && ok || bad "no gnuplot: nognu.csv missing"
[ -e nognu.png ] && bad "no gnuplot, yet nognu.png" || ok

# Ctrl-C: the rows so far, every server stopped, no board left.
"$BIN" compare --models reactor,bio --sweep conns=1,2,4,8 --duration 2 \
    >int.out 2>int.err &
cpid=$!
for _ in $(seq 100); do grep -qE '^(reactor|bio) ' int.out 2>/dev/null && break; \
  [ -d "$THREADLAB_BOARD_DIR" ] && [ -n "$(ls "$THREADLAB_BOARD_DIR")" ] && break; sleep 0.1; done
kill -INT "$cpid"
for _ in $(seq 300); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$cpid" 2>/dev/null; then
  bad "compare --sweep still runs 30 s after Ctrl-C"
else
  wait "$cpid"; cpid=""
  rows=$(grep -cE '^(reactor|bio) +[1248] ' int.out)
  [ "$rows" -ge 1 ] && [ "$rows" -lt 8 ] && grep -q "stopped; $rows rows so far" int.err && ok \
    || { bad "Ctrl-C: $rows rows"; cat int.err; }
  [ -z "$(ls "$THREADLAB_BOARD_DIR" 2>/dev/null)" ] && ok || bad "Ctrl-C left boards behind"
fi

# Ctrl-C in sim --sweep: the runs under way end, no new one starts, the
# rows so far are printed. 160 short runs (5 s of CPU here); the signal
# goes once the sweep catches SIGINT (SigCgt in /proc), so it lands
# during the runs however fast the machine.
"$BIN" sim all --cores 2 --duration 2 --sweep conns=$(seq -s, 100 100 3200) \
    --csv simint.csv >simint.out 2>simint.err &
cpid=$!
catches_sigint() {
  mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$cpid/status" 2>/dev/null)
  [ -n "$mask" ] && [ $(( 0x$mask & 2 )) != 0 ]
}
for _ in $(seq 300); do catches_sigint && break; sleep 0.05; done
kill -INT "$cpid"
for _ in $(seq 600); do kill -0 "$cpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$cpid" 2>/dev/null; then
  bad "sim --sweep still runs 60 s after Ctrl-C"
else
  wait "$cpid"; st=$?; cpid=""
  rows=$(grep -c ',sim,' simint.csv)
  [ "$st" = 0 ] && [ "$rows" -lt 160 ] && grep -q "stopped; $rows rows so far" simint.err && ok \
    || { bad "sim Ctrl-C: exit $st, $rows rows"; cat simint.err; }
fi

# Bad VAR, LIST or overlay: one line, exit 2, nothing run or written.
refuse() {
  what=$1; shift
  "$BIN" "$@" >bad.out 2>bad.err; st=$?
  [ "$st" = 2 ] && one_line_error bad.err "$1" && ok || { bad "$what: exit $st"; cat bad.err; }
}
refuse "an unknown VAR" compare --sweep speed=1,2 --csv untouched.csv
[ -e untouched.csv ] && bad "a usage error wrote the CSV" || ok
refuse "no =" compare --sweep conns
refuse "an empty LIST" compare --sweep conns=
refuse "a word in LIST" compare --sweep conns=1,many
refuse "a decreasing LIST" compare --sweep conns=10,1
refuse "conns=0" compare --sweep conns=0,1
refuse "a fraction of a connection" compare --sweep conns=1.5
refuse "sleep-pct over 100" compare --sweep sleep-pct=50,101
refuse "cpu-us past !cpu's limit" compare --sweep cpu-us=1,20000000
refuse "an empty A..B" compare --sweep conns=1e3..1e1
refuse "past this machine" compare --sweep conns=1e6,1e7
refuse "--conns with a sweep of conns" compare --conns 5 --sweep conns=1,2
refuse "depth in the simulator" sim all --sweep depth=1,2
refuse "sim all without --sweep" sim all
refuse "an unknown VAR in sim" sim bio --sweep nosuch=1
refuse "a quote in --plot" compare --sweep conns=1 --plot "it's.png"
refuse "a --plot that is no picture" sim bio --sweep conns=1 --plot out.pdf
printf 'model,var\nbio,conns\n' >short.csv
refuse "an overlay that is not a sweep" sim bio --sweep conns=1,2 --overlay short.csv --plot x.png
sed 's/^bio,conns,2,real,[0-9.]*/bio,conns,2,real,lots/' real.csv >garbled.csv
refuse "an overlay with a garbled number" sim bio --sweep conns=1,2 --overlay garbled.csv --plot x.png
grep -q "garbled.csv: line [0-9]*: " bad.err && ok || bad "the overlay error names no line"
head -c 150 real.csv >cut.csv
refuse "a cut overlay" sim bio --sweep conns=1,2 --overlay cut.csv --plot x.png
sed 's/,conns,/,depth,/' real.csv >depth.csv
refuse "an overlay of another var" sim bio --sweep conns=1,2 --overlay depth.csv --plot x.png
refuse "an overlay without a file" sim bio --sweep conns=1,2 --overlay nosuch.csv --plot x.png
refuse "an overlay of simulated rows" sim bio --sweep conns=1,2 --overlay sim.csv --plot x.png
{ head -1 real.csv; printf 'bio,conns,1,real,%0600d\n' 1; } >long.csv
refuse "an overlay line of 600 bytes" sim bio --sweep conns=1,2 --overlay long.csv --plot x.png
{ head -1 real.csv; for i in $(seq 161); do sed -n 2p real.csv; done; } >many.csv
refuse "an overlay of 161 rows" sim bio --sweep conns=1,2 --overlay many.csv --plot x.png
[ -e x.png ] && bad "a bad overlay drew a figure" || ok

# --json: one object, the var and a row per (model, value).
"$BIN" sim all --duration 0.01 --sweep cpu-us=0,100 --json >sweep.json 2>/dev/null
grep -q '^{"var":"cpu-us","rows":\[' sweep.json && [ "$(grep -o '"model":' sweep.json | wc -l)" = 10 ] \
  && ok || bad "sim --sweep --json: not 10 rows of cpu-us"

# The decades form gives the powers of ten.
"$BIN" sim reactor --duration 0.01 --sweep conns=1e1..1e3 --csv dec.csv >/dev/null 2>&1
[ "$(cut -d, -f3 dec.csv | tail -n +2 | tr '\n' ' ')" = "10 100 1000 " ] && ok \
  || bad "1e1..1e3 is not 10, 100, 1000"

summary "tests/sweep/run.sh"
