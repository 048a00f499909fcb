#!/bin/sh
# run.sh -- what building needs: build/threadlab must need only the compiler,
# ncursesw and zlib, so a classroom machine without the network (no Check
# library to install) still builds it; the test goals must still ask for
# Check. A pkg-config that denies Check stands in for a machine without it.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)

mkdir -p "$tmp/bin"
cat >"$tmp/bin/pkg-config" <<'PC'
#!/bin/sh
for a in "$@"; do
  [ "$a" = check ] && { echo "asked for check" >>"$ASKED"; exit 1; }
done
exec /usr/bin/pkg-config "$@"
PC
chmod +x "$tmp/bin/pkg-config"
export ASKED="$tmp/asked"

# The plain build (make -n: what it would do, without rebuilding).
: >"$ASKED"
if PATH="$tmp/bin:$PATH" make -s -n -C "$top" all >"$tmp/all.log" 2>&1; then ok
else bad "make all fails without Check: $(tail -3 "$tmp/all.log")"; fi
[ -s "$ASKED" ] && bad "make all asked pkg-config for Check" || ok

# need-deps for the test goals must notice Check is missing, and say
# which package to install (only report: no apt-get from a test).
: >"$ASKED"
if THREADLAB_NO_INSTALL=1 PATH="$tmp/bin:$PATH" "$top/scripts/need-deps" tests \
     >"$tmp/deps.log" 2>&1 </dev/null; then
  bad "need-deps tests passed with Check missing"
else ok; fi
grep -q "apt-get install -y check" "$tmp/deps.log" && ok || bad "need-deps did not name the check package: $(cat "$tmp/deps.log")"

summary "build"
