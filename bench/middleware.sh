#!/usr/bin/env bash
# The costs of docs/PERFORMANCE.md "The tracing layer and the gateway over stateless HTTP":
# stateless 2026-07-28 tools/call of echo, 16 clients, server on CPU 0 and load generator on
# CPU 1, interleaved rounds of 8 s.
#
#   bench/middleware.sh layers    # echo-server with no layer, then with TracingLayer
#   bench/middleware.sh gateway   # mcp serve --http alone, then mcp proxy --config in front of it
#   bench/middleware.sh auth      # mcp serve --http open, then protected (--auth-issuer, a JWT per
#                                 # call; oidc-provider from tests/auth, npm ci there first)
#   bench/middleware.sh           # layers and gateway
#
# Env: BIN (default target/release; needs mcp and mcpwire-bench: cargo build --release -p mcpwire-cli
# -p mcpwire-bench), ROUNDS (default 3), SECONDS_PER_RUN (default 8). Every process started is
# stopped before the next run. Needs taskset, pgrep and python3.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
BIN=${BIN:-target/release}
ROUNDS=${ROUNDS:-3}
RUN=${SECONDS_PER_RUN:-8}
TCK=$(getconf CLK_TCK)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
summary() {
  python3 -c '
import json, sys
r = json.load(sys.stdin)
print("%.0f req/s, server CPU %.2f us/call, p50 %.3f ms, %d errors"
      % (r["req_per_s"], r["cpu_us_per_call"], r["latency"]["p50_ms"], r["errors"]))'
}
# wait_port PORT: until something listens there (10 s at most).
wait_port() {
  for _ in $(seq 100); do
    python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$1)))" && return 0
    sleep 0.1
  done
  echo "nothing listens on $1" >&2; return 1
}
# load PORT PID TOOL [BEARER]: one measured run; prints its JSON.
load() {
  "$BIN/mcpwire-bench" http --url "http://127.0.0.1:$1/mcp" --mode stateless --clients 16 --duration "$RUN" \
    --pid "$2" --cpu 1 --tool "$3" ${4:+--bearer "$4"} --json
}

layers() {
  for round in $(seq "$ROUNDS"); do
    for layers in none tracing; do
      port=$(free_port)
      taskset -c 0 "$BIN/mcpwire-bench" echo-server --style typed --port "$port" --layers "$layers" & pid=$!; pids+=("$pid")
      wait_port "$port"
      echo "round $round, layers $layers: $(load "$port" "$pid" echo | summary)"
      kill "$pid"; wait "$pid" 2>/dev/null || true
    done
  done
}

gateway() {
  echo "{\"mcpServers\": {\"s\": {\"command\": \"$(realpath "$BIN/mcp")\", \"args\": [\"serve\"]}}}" > "$work/gw.json"
  for round in $(seq "$ROUNDS"); do
    for setup in alone gateway; do
      port=$(free_port)
      if [[ $setup == alone ]]; then
        taskset -c 0 "$BIN/mcp" serve --http "127.0.0.1:$port" 2>/dev/null & pid=$!; tool=echo
      else
        taskset -c 0 "$BIN/mcp" proxy --config "$work/gw.json" --http "127.0.0.1:$port" 2>/dev/null & pid=$!; tool=s_echo
      fi
      pids+=("$pid")
      wait_port "$port"
      child=$(pgrep -P "$pid" | head -1 || true)
      before=0; [[ -n $child ]] && before=$(ticks "$child")
      result=$(load "$port" "$pid" "$tool")
      after=0; [[ -n $child ]] && after=$(ticks "$child")
      calls=$(echo "$result" | python3 -c 'import json,sys; print(json.load(sys.stdin)["calls"])')
      upstream=$(python3 -c "print(f'{($after-$before)/$TCK*1e6/max($calls,1):.2f}')")
      echo "round $round, $setup: $(echo "$result" | summary) (the process and its children), of which the upstream $upstream us/call"
      kill "$pid"; wait "$pid" 2>/dev/null || true
    done
  done
}

auth() {
  taskset -c 1 node tests/auth/provider.mjs > "$work/provider.out" 2>/dev/null < <(sleep 100000) & pids+=("$!")
  for _ in $(seq 100); do [[ -s $work/provider.out ]] && break; sleep 0.1; done
  issuer=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer"])' "$work/provider.out")
  for round in $(seq "$ROUNDS"); do
    for setup in open protected; do
      port=$(free_port)
      url="http://127.0.0.1:$port/mcp"
      token=
      if [[ $setup == open ]]; then
        taskset -c 0 "$BIN/mcp" serve --http "127.0.0.1:$port" 2>/dev/null & pid=$!
      else
        taskset -c 0 "$BIN/mcp" serve --http "127.0.0.1:$port" --auth-issuer "$issuer" --auth-audience "$url" \
          --scope mcp 2>/dev/null & pid=$!
        token=$(curl -s -u jwt-alice:jwt-alice-secret -d grant_type=client_credentials -d scope=mcp \
          --data-urlencode "resource=$url" "$issuer/token" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
      fi
      pids+=("$pid")
      wait_port "$port"
      echo "round $round, $setup: $(load "$port" "$pid" echo "$token" | summary)"
      kill "$pid"; wait "$pid" 2>/dev/null || true
    done
  done
}

what=("$@")
[[ ${#what[@]} -gt 0 ]] || what=(layers gateway)
for w in "${what[@]}"; do
  case $w in
    layers) layers ;;
    gateway) gateway ;;
    auth) auth ;;
    *) echo "bench/middleware.sh: unknown measurement '$w' (layers gateway auth)" >&2; exit 2 ;;
  esac
done
