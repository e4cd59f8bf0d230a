#!/usr/bin/env bash
# Scale-out end to end: a rolling restart behind a real haproxy loses no call, in either era.
#
#   tests/scale/run.sh
#
# Starts its own Redis, two instances A and B of `mcp serve --http` sharing it (same --store,
# same --store-prefix, --instance-lease 1, --shutdown-grace 10) and haproxy in front of them
# (haproxy.cfg.in: round robin per request, no affinity, L7 retries), all on free loopback
# ports. Through haproxy, at once:
#   legacy  the official Python SDK 1.x: one session (initialize), with its GET stream
#           (legacy_client.py)
#   modern  the official Python SDK 2.x at 2026-07-28, stateless (modern_client.py)
# each with 4 workers calling `echo` (a counter to be repeated) and `test_long_running_task`
# (5 progress steps of 100 ms) in turn, and 2 calling `echo` back to back (calls.py). Once
# both clients have had answers, A then B is restarted: SIGTERM, wait for it to exit (0), start
# it again on its port, wait until it serves, then until haproxy's check has taken it back. A
# few seconds later the clients stop. About 10 s in all (the venvs installed).
# Passes only if every call of each client was answered right, each made at least MIN_CALLS
# calls, each instance exited 0 within its grace, the legacy client's GET stream came back
# after its instance stopped, and no instance panicked.
#
# Installs the two venvs of tests/interop and tests/e2e (target/interop-venv-2, mcp 2.x;
# target/interop-venv, mcp 1.x) when they are missing, through tests/lib/python_venv.sh.
# Needs redis-server and haproxy (scripts/test's `redis` check installs them).
# Env: MCP_BIN  the mcp binary (default target/ci/mcp, scripts/test's build; relative to the repo root)
#      PYTHON   the interpreter the venvs are made from (default python3)
#      MCP_SCALE_KEEP=1  keep the work directory (every log) instead of removing it
# Every wait is bounded; every process started here is killed on exit. Logs are printed when
# something failed. The last line is `scale: N passed, M failed`.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
cd "$root"

# shellcheck source=../lib/python_venv.sh
source "$root/tests/lib/python_venv.sh"
VENV=$root/target/interop-venv-2
LEGACY_VENV=$root/target/interop-venv

MCP_BIN=${MCP_BIN:-target/ci/mcp}
case $MCP_BIN in /*) ;; */*) MCP_BIN=$root/$MCP_BIN ;; *) MCP_BIN=$(command -v "$MCP_BIN" || echo "$MCP_BIN") ;; esac
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)

GRACE=10          # --shutdown-grace of each instance
START_TIMEOUT=10  # seconds for redis, an instance or haproxy to listen
READY_TIMEOUT=60  # seconds for both clients to connect and have answers (venv imports included)
EXIT_TIMEOUT=$((GRACE + 5))  # seconds for a stopped instance to exit
CHECK_SETTLE=0.6  # seconds after a restarted instance listens: 3 haproxy checks (200 ms apart)
LINGER=4          # seconds the clients go on after the last restart
CLIENT_TIMEOUT=90 # seconds for a client in all (each bounds itself too)
# The fewest calls a client must make: it makes thousands in its ~7 s here (its echo-only
# workers, a few hundred a second), so fewer means it was stuck for most of the run.
MIN_CALLS=300

log() { echo "scale: $(date +%H:%M:%S.%3N) $*"; }

# ---- processes: every one started here is killed on exit ----

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-scale.XXXXXX")
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for _ in $(seq 30); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  if [[ ${MCP_SCALE_KEEP:-} == 1 ]]; then echo "scale: logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A loopback port free now (the kernel's pick; it could be taken before we bind it, rarely).
free_port() {
  "${PYTHON:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# listens PORT: whether something accepts TCP connections on 127.0.0.1:PORT.
listens() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_listening NAME PID PORT: until PORT accepts connections, while PID lives, bounded.
wait_listening() {
  local name=$1 pid=$2 port=$3 deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2>/dev/null || { log "$name exited before listening on $port"; return 1; }
    listens "$port" && return 0
    sleep 0.05
  done
  log "$name did not listen on $port within ${START_TIMEOUT}s"
  return 1
}

# ---- the deployment ----

declare -A port pid runs  # by instance name (a, b): its port, its current pid, how often started

start_redis() {
  redis_port=$(free_port)
  redis-server --save "" --appendonly no --port "$redis_port" --bind 127.0.0.1 \
    </dev/null >"$work/redis.log" 2>&1 &
  pids+=($!)
  wait_listening redis $! "$redis_port"
}

# start_instance NAME: starts (again) the instance NAME on its port, and waits until it serves:
# its `serving on` line, printed once it listens.
start_instance() {
  local name=$1 err
  runs[$name]=$((${runs[$name]:-0} + 1))
  err="$work/$name.${runs[$name]}.stderr"
  : >"$err"  # there before the first grep below, which may run before the child opens it
  RUST_LOG=${RUST_LOG:-info} "$MCP_BIN" serve --http "127.0.0.1:${port[$name]}" \
    --store "redis://127.0.0.1:$redis_port" --store-prefix scale \
    --instance-lease 1 --shutdown-grace "$GRACE" </dev/null >"$work/$name.${runs[$name]}.stdout" 2>"$err" &
  pid[$name]=$!
  pids+=($!)
  local deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    grep -q 'serving on http://' "$err" && return 0
    if ! kill -0 "${pid[$name]}" 2>/dev/null; then
      log "instance $name exited before serving:"; sed 's/^/    /' "$err"; return 1
    fi
    sleep 0.05
  done
  log "instance $name was not serving within ${START_TIMEOUT}s:"; sed 's/^/    /' "$err"
  return 1
}

start_haproxy() {
  haproxy_port=$(free_port)
  sed -e "s/@FRONTEND@/127.0.0.1:$haproxy_port/" -e "s/@A@/127.0.0.1:${port[a]}/" \
      -e "s/@B@/127.0.0.1:${port[b]}/" "$here/haproxy.cfg.in" >"$work/haproxy.cfg"
  # -db: in the foreground, so that the pid we hold is haproxy's.
  "$HAPROXY" -f "$work/haproxy.cfg" -db </dev/null >"$work/haproxy.log" 2>&1 &
  pids+=($!)
  wait_listening haproxy $! "$haproxy_port"
}

# ---- the rolling restart ----

passed=0 failed=0
pass() { passed=$((passed + 1)); log "PASS $1"; }
fail() { failed=$((failed + 1)); log "FAIL $1${2:+ ($2)}"; }

# restart NAME: SIGTERM, wait for the exit (bounded) and its code, start it again, wait until
# haproxy's check can have taken it back. Prints how long it took to exit.
restart() {
  local name=$1 old=${pid[$1]} t0 rc=0 deadline
  t0=$(date +%s%3N)
  log "restart $name: SIGTERM to $old"
  kill -TERM "$old"
  deadline=$((SECONDS + EXIT_TIMEOUT))
  while kill -0 "$old" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.02; done
  if kill -0 "$old" 2>/dev/null; then
    fail "restart $name" "still running ${EXIT_TIMEOUT}s after SIGTERM (grace ${GRACE}s)"
    kill -KILL "$old" 2>/dev/null || true
    wait "$old" 2>/dev/null || true
  else
    wait "$old" || rc=$?
    local took=$(($(date +%s%3N) - t0))
    if [[ $rc == 0 ]]; then
      pass "restart $name: exited 0 in ${took} ms after SIGTERM"
    else
      fail "restart $name" "exited $rc in ${took} ms after SIGTERM"
    fi
  fi
  start_instance "$name" || { fail "restart $name" "did not serve again"; return 0; }
  log "restart $name: serving again as ${pid[$name]}"
  sleep "$CHECK_SETTLE"
}

# ---- the clients ----

# start_client NAME PYTHON SCRIPT: in the background, bounded; its pid in client_pid[NAME].
declare -A client_pid
start_client() {
  local name=$1 python=$2 script=$3
  timeout --kill-after=5 "$CLIENT_TIMEOUT" "$python" "$here/$script" "http://127.0.0.1:$haproxy_port/mcp" \
    "$work/$name.ready" "$work/stop" "$MIN_CALLS" >"$work/$name.out" 2>&1 &
  client_pid[$name]=$!
  pids+=($!)
}

# wait_ready: until both clients have had answers (each touches its READY file), bounded.
wait_ready() {
  local deadline=$((SECONDS + READY_TIMEOUT)) name
  while ((SECONDS < deadline)); do
    [[ -f $work/legacy.ready && -f $work/modern.ready ]] && return 0
    for name in legacy modern; do
      kill -0 "${client_pid[$name]}" 2>/dev/null || { log "the $name client ended before it was ready"; return 1; }
    done
    sleep 0.1
  done
  log "the clients were not ready within ${READY_TIMEOUT}s"
  return 1
}

# finish_client NAME: waits for it (it is bounded by `timeout`), prints its output.
finish_client() {
  local name=$1 rc=0
  wait "${client_pid[$name]}" || rc=$?
  sed "s/^/    /" "$work/$name.out"
  if [[ $rc == 0 ]]; then
    pass "$name client: $(grep -E "^$name: [0-9]+ calls" "$work/$name.out")"
  else
    [[ $rc == 124 ]] && log "the $name client did not finish within ${CLIENT_TIMEOUT}s"
    fail "$name client" "exit $rc: $(grep -E "^$name: [0-9]+ calls" "$work/$name.out" || echo 'no summary')"
  fi
}

# The legacy session's GET stream was held by an instance that was then stopped (both were):
# the SDK must have opened it again, and the last one opened must have been accepted.
check_get_stream() {
  local line count last
  line=$(grep -E '^legacy: GET streams opened' "$work/legacy.out" || true)
  count=$(sed -nE 's/^legacy: GET streams opened: ([0-9]+).*/\1/p' <<<"$line")
  last=$(sed -nE 's/.*statuses \[(.*, )?([0-9]+)\]\)$/\2/p' <<<"$line")
  if [[ -n $count && $count -ge 2 && $last == 200 ]]; then
    pass "legacy GET stream reopened across the restarts ($count opened)"
  else
    fail "legacy GET stream" "${line:-not reported}: expected at least 2 opened, the last one 200"
  fi
}

# What haproxy's log says of the requests (informative, not a check): how many it retried or
# redispatched (httplog's 11th field, actconn/feconn/beconn/srv_conn/retries, `+N` when
# redispatched), and the statuses it answered.
haproxy_summary() {
  awk '$NF != "\"<BADREQ>\"" && $6 ~ /^[0-9]+$/ && $11 ~ /^[0-9]+\/[0-9]+\/[0-9]+\/[0-9]+\/\+?[0-9]+$/ {
         n++; status[$6]++; split($11, c, "/"); if (c[5] != "0") retried++
       }
       END {
         printf "%d requests, %d retried or redispatched, statuses:", n, retried
         for (s in status) printf " %s x%d", s, status[s]
       }' "$work/haproxy.log"
}

# On failure: the end of every instance's stderr and of Redis's log, and haproxy's lines that
# matter (its thousands of 200s left out): the instances going DOWN and UP, and every request
# answered other than 2xx or ended abnormally (httplog's termination state, not `----`).
show_logs() {
  local f
  for f in "$work"/*.stderr "$work/redis.log"; do
    [[ -s $f ]] || continue
    echo "---- $(basename "$f") (last 40 lines)"
    tail -n 40 "$f" | sed 's/^/    /'
  done
  echo "---- haproxy.log: state changes, answers other than 2xx, abnormal ends (at most 80 lines)"
  awk '$11 !~ /^[0-9]+\/[0-9]+\/[0-9]+\/[0-9]+\/\+?[0-9]+$/ || $6 !~ /^20[0-9]$/ || $10 != "----"' \
    "$work/haproxy.log" | grep -v '^\[WARNING\]' | head -n 80 | sed 's/^/    /'
}

# ---- the run ----

main() {
  [[ -x $MCP_BIN ]] || { echo "scale: the binary $MCP_BIN is missing (scripts/test build makes it, or set MCP_BIN)" >&2; exit 1; }
  command -v redis-server >/dev/null && [[ -x $HAPROXY ]] \
    || { echo "scale: redis-server and haproxy are needed (apt-get install redis-server haproxy)" >&2; exit 1; }
  setup_mcp_venv "$VENV" 2.3.0 && setup_mcp_venv "$LEGACY_VENV" 1.30.0 \
    || { echo "scale: could not install the Python SDK venvs" >&2; exit 1; }

  start_redis || exit 1
  port[a]=$(free_port) port[b]=$(free_port)
  start_instance a && start_instance b || exit 1
  start_haproxy || exit 1
  log "redis :$redis_port, instance a :${port[a]}, instance b :${port[b]}, haproxy :$haproxy_port"

  start_client legacy "$LEGACY_VENV/bin/python" legacy_client.py
  start_client modern "$VENV/bin/python" modern_client.py
  if wait_ready; then
    log "both clients have answers: rolling restart"
    restart a
    restart b
    log "restarts done; the clients go on for ${LINGER}s"
    sleep "$LINGER"
  else
    fail "the clients' start"
  fi
  touch "$work/stop"
  finish_client legacy
  finish_client modern
  check_get_stream
  if grep -l 'panicked' "$work"/*.stderr >/dev/null 2>&1; then
    fail "no instance panicked" "$(grep -l 'panicked' "$work"/*.stderr | xargs -n1 basename | tr '\n' ' ')"
  fi
  log "haproxy: $(haproxy_summary)"
  ((failed == 0)) || show_logs
  echo "scale: $passed passed, $failed failed"
  ((failed == 0))
}

main "$@"
