# lib.sh -- what the shell test scripts share (sourced, not run).
# Needs $BIN (the threadlab binary) and $tmp (a scratch directory).

pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "  FAIL: $*"; }

# start_server NAME MODEL [OPTIONS...]: `threadlab serve` on a free port,
# output in $tmp/NAME.log; sets $server_pid and $port ("" if it never
# wrote its port within 5 s).
start_server() {
  name=$1; shift
  rm -f "$tmp/$name.port"
  "$BIN" serve "$@" --port 0 --port-file "$tmp/$name.port" >"$tmp/$name.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 50); do [ -s "$tmp/$name.port" ] && break; sleep 0.1; done
  port=$(cat "$tmp/$name.port" 2>/dev/null)
}

# summary NAME: print the tally; succeed only if nothing failed.
summary() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}
