#!/usr/bin/env bash
# Interop tests against the official Python and TypeScript MCP SDKs, both eras, both directions:
#
#   python          the Python SDK 1.x client (legacy era) against `$MCP_BIN serve` on stdio
#   ts              the TypeScript SDK 1.x client (legacy era) against `$MCP_BIN serve` on stdio
#   python-modern   the Python SDK 2.x client (2026-07-28) against `$MCP_BIN serve --http` and
#                   `$MCP_BIN serve` (stdio)
#   ts-modern       the TypeScript SDK 2.x client (2026-07-28), the same two ways
#   python-oauth    the Python SDK 2.x client with its OAuth support (authorization code, PKCE,
#                   dynamic registration) against `$MCP_BIN serve --http --auth-issuer …`, protected
#                   by a real authorization server (oidc-provider, tests/auth)
#   servers         our CLI (`$MCP_BIN info|list|call|read|prompt`) against servers written with
#                   the Python SDK 2.x (python_server.py) and the TypeScript SDK 2.x
#                   (ts_server.mjs), each over Streamable HTTP and stdio, detected era
#                   (2026-07-28) and pinned legacy (--protocol-version 2025-11-25)
#
#   tests/interop/run.sh                      # everything
#   tests/interop/run.sh python-modern ts     # only these
#
# Installs what it needs, idempotently (a second run installs nothing), everything pinned:
#   - target/interop-venv:   the Python SDK 1.x (mcp==$PY_MCP_VERSION) and its dependencies;
#   - target/interop-venv-2: the Python SDK 2.x (mcp==$PY2_MCP_VERSION) and its dependencies;
#   - tests/interop/node_modules from package.json + package-lock.json (`npm ci`): the 1.x SDK
#     (@modelcontextprotocol/sdk) and the 2.x client and server packages;
#   - tests/auth/node_modules (`npm ci`): oidc-provider, the authorization server.
# Env: MCP_BIN   the binary (default: target/release/mcp, relative to the repo root)
#      PYTHON    the interpreter the venvs are made from (default: python3; needs >= 3.10)
# Works from any directory. Every server it starts listens on 127.0.0.1 only and is killed on
# exit (trap); every client run is bounded by a timeout. Each run prints its own checks (`PASS`
# lines, and `KNOWN-FAIL:` lines for known bugs of ours that are skipped) and its own count.
# Exits non-zero if any run fails (or cannot be installed). The last line is
# `interop: N passed, N failed`, counting the runs (one per client or server and transport).
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
cd "$root"

# The Python SDKs 1.x and 2.x (revision 2026-07-28), each with every package it pulls in
# pinned in tests/python/mcp-VERSION.txt (a `pip freeze`); installed by tests/lib/python_venv.sh.
# shellcheck source=../lib/python_venv.sh
source "$root/tests/lib/python_venv.sh"
PY_MCP_VERSION=1.30.0
VENV=$root/target/interop-venv
PY2_MCP_VERSION=2.3.0
VENV2=$root/target/interop-venv-2

CLIENT_TIMEOUT=240  # seconds for one run; each client also bounds itself (60-90 s, 30 s a command)
SERVER_START_TIMEOUT=30  # seconds for a server to start listening

MCP_BIN=${MCP_BIN:-target/release/mcp}
case $MCP_BIN in /*) ;; */*) MCP_BIN=$root/$MCP_BIN ;; *) MCP_BIN=$(command -v "$MCP_BIN" || echo "$MCP_BIN") ;; esac

all=(python ts python-modern ts-modern python-oauth servers)
want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=("${all[@]}")
for w in "${want[@]}"; do
  [[ " ${all[*]} " == *" $w "* ]] || { echo "run.sh: unknown selector '$w' (${all[*]})" >&2; exit 2; }
done
wants() { [[ " ${want[*]} " == *" $1 "* ]]; }

log() { echo "interop: $*"; }

if [[ ! -x $MCP_BIN ]]; then
  echo "interop: the binary $MCP_BIN is missing or not executable" \
       "(build it with 'cargo build --release', or point MCP_BIN at it)" >&2
  exit 1
fi

# --- processes we start: killed (with their process groups) whatever way we leave ------------
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-interop.XXXXXX")
server_pids=()
cleanup() {
  local pid
  if [[ -s $work/client.pid ]]; then  # a client run still going (we were interrupted)
    pid=$(cat "$work/client.pid")
    kill -TERM -- "-$pid" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  for pid in "${server_pids[@]}"; do
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  done
  if [[ ${#server_pids[@]} -gt 0 ]]; then
    sleep 0.3
    for pid in "${server_pids[@]}"; do
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- installs ---------------------------------------------------------------------------------
python_ok() {
  local py=${PYTHON:-python3}
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "interop: $py is missing or older than 3.10 (the mcp SDK needs >= 3.10)" >&2
    return 1
  fi
}

setup_node() {
  local stamp="$here/node_modules/.interop-installed" sig
  if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
    echo "interop: node is missing or older than 20 (the TypeScript SDKs need >= 20)" >&2
    return 1
  fi
  sig="$(node --version) $(cksum < "$here/package.json") $(cksum < "$here/package-lock.json")"
  if [[ -f $stamp && "$(cat "$stamp")" == "$sig" ]]; then
    log "node_modules up to date ($here/node_modules)"
    return 0
  fi
  log "npm ci in $here"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  printf '%s' "$sig" > "$stamp"
}

setup_auth_server() {
  local dir="$root/tests/auth" stamp="$root/tests/auth/node_modules/.auth-installed" sig
  sig="$(node --version) $(cksum < "$dir/package.json") $(cksum < "$dir/package-lock.json")"
  if [[ -f $stamp && "$(cat "$stamp")" == "$sig" ]]; then
    return 0
  fi
  log "npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  printf '%s' "$sig" > "$stamp"
}

# Each set-up runs at most once; its outcome is remembered.
declare -A setup_state=()
need() {  # py1 | py2 | node | auth
  if [[ -z ${setup_state[$1]:-} ]]; then
    local rc=0
    case $1 in
      py1) setup_mcp_venv "$VENV" "$PY_MCP_VERSION" || rc=$? ;;
      py2) setup_mcp_venv "$VENV2" "$PY2_MCP_VERSION" || rc=$? ;;
      node) setup_node || rc=$? ;;
      auth) setup_auth_server || rc=$? ;;
    esac
    setup_state[$1]=$rc
  fi
  [[ ${setup_state[$1]} == 0 ]]
}

# --- servers on loopback ----------------------------------------------------------------------
free_port() {
  "${PYTHON:-python3}" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

listening() {  # PORT
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# start_server NAME COMMAND... : runs COMMAND with `{PORT}` replaced by a free port, in its own
# process group, and waits until it listens. Sets `server_pid`, `server_url` and `server_log`.
start_server() {
  local name=$1 attempt port pid waited arg
  shift
  server_log="$work/$name.log"
  for attempt in 1 2 3; do
    port=$(free_port)
    local argv=()
    for arg in "$@"; do argv+=("${arg//\{PORT\}/$port}"); done
    setsid "${argv[@]}" >"$server_log" 2>&1 < /dev/null &
    pid=$!
    server_pids+=("$pid")
    server_pid=$pid
    for ((waited = 0; waited < SERVER_START_TIMEOUT * 10; waited++)); do
      if listening "$port"; then
        server_url="http://127.0.0.1:$port/mcp"
        log "$name listening at $server_url (pid $pid)"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    log "$name did not start listening on port $port (attempt $attempt); its log:"
    tail -n 20 "$server_log" | sed 's/^/    /'
    stop_server "$pid"
  done
  return 1
}

stop_server() {  # PID: TERM to its process group, KILL after 3 s; then forgotten by the trap
  kill -TERM -- "-$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null || true
  local i pid kept=()
  for ((i = 0; i < 30; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$1" 2>/dev/null || true
  for pid in "${server_pids[@]}"; do [[ $pid == "$1" ]] || kept+=("$pid"); done
  server_pids=("${kept[@]}")
}

# --- runs -------------------------------------------------------------------------------------
passed=0 failed=0
summary=()
record() {  # NAME RC OUTPUT_FILE SECONDS_TAKEN
  local name=$1 rc=$2 counts
  counts=$(grep -E '^[a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$3" | tail -n 1 | sed -E 's/^[a-z0-9-]+: //') || true
  if [[ $rc == 0 ]]; then
    passed=$((passed + 1)); log "PASS $name"
  else
    failed=$((failed + 1))
    [[ $rc == 124 ]] && log "$name did not finish within ${CLIENT_TIMEOUT}s"
    log "FAIL $name (exit $rc)"
  fi
  summary+=("$(printf '%-40s %-34s %4ss' "$name" "${counts:-no count printed}" "$4")")
}

run() {  # NAME COMMAND...
  local name=$1 rc out="$work/run.out"
  shift
  log "running $name"
  local started=$SECONDS
  rm -f "$work/client.pid" "$work/client.rc"
  # `timeout` makes itself a process-group leader; its pid (written first) lets the trap end the
  # whole run. Waiting in the background keeps this shell responsive to Ctrl-C and TERM.
  { sh -c 'echo $$ > "$0" && exec "$@"' "$work/client.pid" \
      timeout --kill-after=10 "$CLIENT_TIMEOUT" "$@" < /dev/null 2>&1
    echo $? > "$work/client.rc"
  } | tee "$out" &
  wait $! || true
  rc=$(cat "$work/client.rc" 2>/dev/null || echo 1)
  rm -f "$work/client.pid"
  record "$name" "$rc" "$out" $((SECONDS - started))
}

cannot() {  # NAME WHY
  failed=$((failed + 1)); log "FAIL $1 ($2)"
  summary+=("$(printf '%-40s %s' "$1" "not run: $2")")
}

# run_against_http NAME SERVER_NAME SERVER_COMMAND -- CLIENT_COMMAND... : starts the server, runs
# the client with the server's URL as its last argument, stops the server.
run_against_http() {
  local name=$1 sname=$2
  shift 2
  local server=()
  while [[ $1 != -- ]]; do server+=("$1"); shift; done
  shift
  if ! start_server "$sname" "${server[@]}"; then
    cannot "$name" "the server did not start"
    return
  fi
  local pid=$server_pid
  run "$name" "$@" "$server_url"
  stop_server "$pid"
  if [[ ${summary[-1]} != *", 0 failed"* ]]; then
    log "the log of $sname:"; tail -n 30 "$server_log" | sed 's/^/    /'
  fi
}

if wants python; then
  if need py1; then
    run "python 1.x client, stdio, legacy" "$VENV/bin/python" "$here/python_client.py" "$MCP_BIN" serve
  else
    cannot "python 1.x client, stdio, legacy" "could not install the Python SDK $PY_MCP_VERSION"
  fi
fi
if wants ts; then
  if need node; then
    run "ts 1.x client, stdio, legacy" node "$here/ts_client.mjs" "$MCP_BIN" serve
  else
    cannot "ts 1.x client, stdio, legacy" "could not install the TypeScript SDKs"
  fi
fi
if wants python-modern; then
  if need py2; then
    run_against_http "python 2.x client, http, 2026-07-28" "mcp-serve-http" \
      "$MCP_BIN" serve --http "127.0.0.1:{PORT}" -- "$VENV2/bin/python" "$here/python_modern_client.py"
    run "python 2.x client, stdio, 2026-07-28" "$VENV2/bin/python" "$here/python_modern_client.py" "$MCP_BIN" serve
  else
    cannot "python 2.x client" "could not install the Python SDK $PY2_MCP_VERSION"
  fi
fi
if wants ts-modern; then
  if need node; then
    run_against_http "ts 2.x client, http, 2026-07-28" "mcp-serve-http" \
      "$MCP_BIN" serve --http "127.0.0.1:{PORT}" -- node "$here/ts_modern_client.mjs"
    run "ts 2.x client, stdio, 2026-07-28" node "$here/ts_modern_client.mjs" "$MCP_BIN" serve
  else
    cannot "ts 2.x client" "could not install the TypeScript SDKs"
  fi
fi
if wants python-oauth; then
  if need py2 && need auth; then
    run "python 2.x OAuth client, http, oidc-provider" "$VENV2/bin/python" "$here/python_oauth_client.py" "$MCP_BIN"
  else
    cannot "python 2.x OAuth client" "could not install the Python SDK $PY2_MCP_VERSION or oidc-provider"
  fi
fi
if wants servers; then
  if need py2; then
    py2=$VENV2/bin/python
    run_against_http "mcp CLI -> python 2.x server, http" "python-server-http" \
      "$py2" "$here/python_server.py" --http "{PORT}" \
      -- "$py2" "$here/cli_client.py" cli-python-http interop-python-server "$MCP_BIN"
    run "mcp CLI -> python 2.x server, stdio" \
      "$py2" "$here/cli_client.py" cli-python-stdio interop-python-server "$MCP_BIN" \
      "$py2 $here/python_server.py"
  else
    cannot "mcp CLI -> python 2.x server" "could not install the Python SDK $PY2_MCP_VERSION"
  fi
  if need node && python_ok; then
    cli_py=${PYTHON:-python3}
    run_against_http "mcp CLI -> ts 2.x server, http" "ts-server-http" \
      node "$here/ts_server.mjs" --http "{PORT}" \
      -- "$cli_py" "$here/cli_client.py" cli-ts-http interop-ts-server "$MCP_BIN"
    run "mcp CLI -> ts 2.x server, stdio" \
      "$cli_py" "$here/cli_client.py" cli-ts-stdio interop-ts-server "$MCP_BIN" "node $here/ts_server.mjs"
  else
    cannot "mcp CLI -> ts 2.x server" "could not install the TypeScript SDKs (or no python3 >= 3.10)"
  fi
fi

log "summary (checks per run):"
for line in "${summary[@]}"; do echo "    $line"; done
echo "interop: $passed passed, $failed failed"
[[ $failed == 0 ]]
