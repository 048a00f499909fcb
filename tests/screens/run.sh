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

summary screens
