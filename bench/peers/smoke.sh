#!/usr/bin/env bash
# Smoke-tests the benchmark peers on loopback with the exact request sequences
# documented in bench/peers/README.md (the harness mirrors them).
#
#   bash bench/peers/smoke.sh [rmcp|ts|python ...]    (default: all three)
#
# Needs the peers installed (bench/peers/setup.sh), curl and timeout.
# BENCH_SMOKE_PORT picks the first port (default 18741; three are used).
set -euo pipefail

PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$PEERS/../.." && pwd)"
VENV="${BENCH_VENV:-$ROOT/target/bench-venv}"
PORT="${BENCH_SMOKE_PORT:-18741}"
TMP="$(mktemp -d)"
SERVER_PID=""
FAILED=0
PASSED=0

cleanup() {
    if [ -n "$SERVER_PID" ]; then kill -TERM "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT

peer_cmd() {
    case "$1" in
        rmcp) echo "$PEERS/rmcp/target/release/rmcp-echo" ;;
        ts) echo "node $PEERS/ts/server.mjs" ;;
        python) echo "$VENV/bin/python $PEERS/python/server.py" ;;
        *) echo "unknown peer: $1" >&2; exit 2 ;;
    esac
}

check() { # name, file, expected substring
    if grep -qF -- "$3" "$2"; then
        echo "  ok    $1"
        PASSED=$((PASSED + 1))
    else
        echo "  FAIL  $1: expected '$3' in:"
        sed 's/^/        /' "$2"
        FAILED=$((FAILED + 1))
    fi
}

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}'
MODERN_CALL='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
EXPECT='"content":[{"type":"text","text":"hello"}]'
EXPECT_PY='"content":[{"text":"hello","type":"text"}]' # Python's key order
POST=(curl -sS --max-time 10 -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')

wait_port() {
    # A TCP connect, not an HTTP request: a GET /mcp can open a long-lived
    # SSE stream (the Python peer's stateless mode holds it open).
    local i
    for i in $(seq 1 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.1
    done
    echo "  FAIL  server did not listen on port $1" >&2
    return 1
}

start_http() { # peer port mode
    # shellcheck disable=SC2046
    $(peer_cmd "$1") http "$2" "$3" 2>"$TMP/stderr" &
    SERVER_PID=$!
    wait_port "$2"
}

stop_http() {
    kill -TERM "$SERVER_PID"
    local rc=0
    wait "$SERVER_PID" || rc=$?
    SERVER_PID=""
    # 0, or 143 when the runtime re-raises SIGTERM (uvicorn does).
    if [ "$rc" != 0 ] && [ "$rc" != 143 ]; then
        echo "  FAIL  exit status $rc after SIGTERM"
        FAILED=$((FAILED + 1))
    fi
}

smoke() {
    local peer="$1" expect="$EXPECT"
    [ "$peer" = python ] && expect="$EXPECT_PY"
    echo "== $peer"

    # stdio: keep stdin open briefly so the last response is written before EOF
    # (the Python SDK drops in-flight requests when stdin closes).
    # shellcheck disable=SC2046
    { printf '%s\n' "$INIT" "$INITIALIZED" "$CALL"; sleep 1; } \
        | timeout 10 $(peer_cmd "$peer") stdio >"$TMP/out" 2>"$TMP/stderr" || true
    check "stdio legacy (2025-06-18)" "$TMP/out" "$expect"
    # shellcheck disable=SC2046
    { printf '%s\n' "$MODERN_CALL"; sleep 1; } \
        | timeout 10 $(peer_cmd "$peer") stdio >"$TMP/out" 2>"$TMP/stderr" || true
    check "stdio modern (2026-07-28, no initialize)" "$TMP/out" "$expect"

    # sessions
    local port="$PORT" url sid
    url="http://127.0.0.1:$port/mcp"
    start_http "$peer" "$port" sessions
    "${POST[@]}" -D "$TMP/headers" "$url" -d "$INIT" >"$TMP/out"
    sid="$(grep -i '^mcp-session-id:' "$TMP/headers" | cut -d' ' -f2 | tr -d '\r')"
    check "sessions initialize (SSE, Mcp-Session-Id=${sid:-missing})" "$TMP/out" '"protocolVersion":"2025-06-18"'
    "${POST[@]}" -o /dev/null -w '%{http_code}' "$url" -H "Mcp-Session-Id: $sid" \
        -H 'MCP-Protocol-Version: 2025-06-18' -d "$INITIALIZED" >"$TMP/out"
    check "sessions notifications/initialized -> 202" "$TMP/out" 202
    "${POST[@]}" "$url" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-06-18' -d "$CALL" >"$TMP/out"
    check "sessions tools/call" "$TMP/out" "$expect"
    stop_http

    # stateless
    port=$((PORT + 1))
    url="http://127.0.0.1:$port/mcp"
    start_http "$peer" "$port" stateless
    "${POST[@]}" -D "$TMP/headers" "$url" -H 'MCP-Protocol-Version: 2026-07-28' \
        -H 'Mcp-Method: tools/call' -H 'Mcp-Name: echo' -d "$MODERN_CALL" >"$TMP/out"
    check "stateless modern (2026-07-28) tools/call" "$TMP/out" "$expect"
    check "stateless modern answers application/json" "$TMP/headers" "application/json"
    "${POST[@]}" -D "$TMP/headers" "$url" -H 'MCP-Protocol-Version: 2025-06-18' -d "$CALL" >"$TMP/out"
    check "stateless legacy (2025-06-18, no initialize) tools/call" "$TMP/out" "$expect"
    stop_http
}

peers=("$@")
[ ${#peers[@]} -eq 0 ] && peers=(rmcp ts python)
for p in "${peers[@]}"; do smoke "$p"; done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
