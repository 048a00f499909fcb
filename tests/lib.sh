# lib.sh -- what the shell test scripts share (sourced, not run).
# Needs $BIN (the threadlab binary) and $tmp (a scratch directory).

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "  FAIL: $*"; }

# start_server NAME MODEL [OPTIONS...]: `threadlab serve` on a free port,
# output in $tmp/NAME.log; sets $server_pid and $port ("" if it never
# wrote its port within 30 s: a machine shared with busy cores and other
# tests can take seconds to start one).
start_server() {
  name=$1; shift
  rm -f "$tmp/$name.port"
  "$BIN" serve "$@" --port 0 --port-file "$tmp/$name.port" >"$tmp/$name.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do
    [ -s "$tmp/$name.port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break      # it exited: no port will come
    sleep 0.1
  done
  port=$(cat "$tmp/$name.port" 2>/dev/null)
}

# summary NAME: print the tally; succeed only if nothing failed.
summary() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}
