#!/usr/bin/env bash
# End-to-end tests of the bridge, both ways, with the official Python SDK as the client:
#
#   modern  the SDK 2.x (speaks 2026-07-28) through
#           `mcp proxy "npx -y @modelcontextprotocol/server-everything@..." --http 127.0.0.1:0`
#           (server-everything speaks only the handshake era): tools, progress, resources,
#           prompts, and the upstream's elicitation and sampling requests reaching the SDK's
#           callbacks as input_required rounds, with 2026-07-28 on the wire (modern_client.py)
#   legacy  the SDK 1.x (knows nothing past 2025-11-25) through
#           `mcp proxy "$MCP_BIN serve --modern-only" --http 127.0.0.1:0`: initialize at a legacy
#           revision, tools, progress, sampling and elicitation put to it by the modern server,
#           resources, prompts (legacy_client.py)
#   control the same 1.x client straight to `$MCP_BIN serve --modern-only --http`: refused
#   gateway `mcp proxy --config FILE --http 127.0.0.1:0` with three servers at once, each under
#           its name: server-everything, server-filesystem (pinned, npx) and `$MCP_BIN serve`;
#           driven by the Python SDK 2.x (modern, gateway_client.py) and by the TypeScript SDK 1.x
#           (legacy, tests/interop/ts_gateway_client.mjs, with tests/interop's node_modules)
#
#   tests/e2e/run.sh                 # all three
#   tests/e2e/run.sh modern legacy   # some of them
#
# Installs what it needs, idempotently (a second run installs nothing): two Python venvs,
# target/interop-venv-2 (mcp 2.x) and target/interop-venv (mcp 1.x), shared with
# tests/interop/run.sh, each with every package pinned (tests/python/mcp-VERSION.txt).
# npx fetches server-everything on first use.
# Env: MCP_BIN             the mcp binary (default: target/release/mcp, relative to the repo root)
#      PYTHON              the interpreter the venvs are made from (default: python3; >= 3.10)
#      MCP_E2E_EVERYTHING  the server-everything package spec (default: the pinned one below)
# Every wait is bounded; every process started here is killed on exit (each proxy runs in a
# process group of its own, with its upstream). The last line is `e2e-bridge: N passed, M failed`;
# the exit code is non-zero if any case failed.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
cd "$root"

EVERYTHING=${MCP_E2E_EVERYTHING:-@modelcontextprotocol/server-everything@2026.8.31}
FILESYSTEM=@modelcontextprotocol/server-filesystem@2026.8.31

# The modern and the legacy Python SDK, each with every package it pulls in pinned in
# tests/python/mcp-VERSION.txt; installed by tests/lib/python_venv.sh.
# shellcheck source=../lib/python_venv.sh
source "$root/tests/lib/python_venv.sh"
PY_MCP_VERSION=2.3.0
PY_LEGACY_VERSION=1.30.0
# The same venvs as tests/interop/run.sh (same pins): installed once for both.
VENV=$root/target/interop-venv-2
LEGACY_VENV=$root/target/interop-venv
START_TIMEOUT=180  # seconds for a proxy to be serving (npx may download the package first)
CLIENT_TIMEOUT=150 # seconds for one client script (each bounds itself to 90 s as well)

MCP_BIN=${MCP_BIN:-target/release/mcp}
case $MCP_BIN in /*) ;; */*) MCP_BIN=$root/$MCP_BIN ;; *) MCP_BIN=$(command -v "$MCP_BIN" || echo "$MCP_BIN") ;; esac

all_cases=(modern legacy control gateway)
want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=("${all_cases[@]}")
for w in "${want[@]}"; do
  [[ " ${all_cases[*]} " == *" $w "* ]] || { echo "run.sh: unknown case '$w' (${all_cases[*]})" >&2; exit 2; }
done
wants() { [[ " ${want[*]} " == *" $1 "* ]]; }

log() { echo "e2e-bridge: $*"; }

if [[ ! -x $MCP_BIN ]]; then
  echo "e2e-bridge: the binary $MCP_BIN is missing or not executable" \
       "(build it with 'cargo build --release', or point MCP_BIN at it)" >&2
  exit 1
fi

# ---- processes: each started in a process group of its own, all killed on exit ----

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-e2e-bridge.XXXXXX")
groups=()
cleanup() {
  local g
  for g in "${groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local alive=0
    for g in "${groups[@]}"; do kill -0 -- "-$g" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NAME COMMAND...: runs COMMAND (which prints `serving on http://...` on stderr) in a new
# process group, waits until it serves, and sets $url to its /mcp endpoint.
start() {
  local name=$1; shift
  local err="$work/$name.stderr"
  : >"$err"
  setsid "$@" </dev/null >"$work/$name.stdout" 2>"$err" &
  local pid=$!
  groups+=("$pid")
  url=
  local deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    url=$(grep -o -m1 'serving on http://[^ ]*/mcp' "$err" | sed 's/^serving on //') || true
    [[ -n $url ]] && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name exited before serving:"; sed 's/^/    /' "$err"
      return 1
    fi
    sleep 0.2
  done
  log "$name was not serving within ${START_TIMEOUT}s:"; sed 's/^/    /' "$err"
  return 1
}

# ---- the venvs: setup_mcp_venv, from tests/lib/python_venv.sh ----

# ---- the cases ----

passed=0 failed=0
pass() { passed=$((passed + 1)); log "PASS $1"; }
fail() { failed=$((failed + 1)); log "FAIL $1${2:+ ($2)}"; }

# client NAME PYTHON SCRIPT ARGS...: runs one client script, bounded.
client() {
  local name=$1; shift
  local rc=0
  timeout --kill-after=10 "$CLIENT_TIMEOUT" "$@" || rc=$?
  if [[ $rc == 0 ]]; then
    pass "$name"
  else
    [[ $rc == 124 ]] && log "$name did not finish within ${CLIENT_TIMEOUT}s"
    fail "$name" "exit $rc"
  fi
}

# expect_upstream NAME TEXT: the proxy NAME said its upstream speaks TEXT.
expect_upstream() {
  if grep -q "speaks $2" "$work/$1.stderr"; then
    return 0
  fi
  log "proxy $1 did not report its upstream speaking '$2':"; sed 's/^/    /' "$work/$1.stderr"
  return 1
}

if wants modern; then
  if ! setup_mcp_venv "$VENV" "$PY_MCP_VERSION"; then
    fail modern "could not install mcp==$PY_MCP_VERSION"
  elif ! start proxy-everything "$MCP_BIN" proxy "npx -y $EVERYTHING" --http 127.0.0.1:0 --timeout 150; then
    fail modern "the proxy did not start"
  elif ! expect_upstream proxy-everything "2025-11-25 (Legacy era)"; then
    fail modern "the upstream is not the legacy-only server it should be"
  else
    log "modern: python SDK $PY_MCP_VERSION -> mcp proxy ($url) -> $EVERYTHING (legacy era)"
    client modern "$VENV/bin/python" "$here/modern_client.py" "$url"
  fi
fi

if wants legacy || wants control; then
  legacy_ok=1
  setup_mcp_venv "$LEGACY_VENV" "$PY_LEGACY_VERSION" || legacy_ok=0
fi

if wants legacy; then
  if [[ $legacy_ok == 0 ]]; then
    fail legacy "could not install mcp==$PY_LEGACY_VERSION"
  elif ! start proxy-modern-only "$MCP_BIN" proxy "'$MCP_BIN' serve --modern-only" --http 127.0.0.1:0; then
    fail legacy "the proxy did not start"
  elif ! expect_upstream proxy-modern-only "2026-07-28 (Modern era)"; then
    fail legacy "the upstream is not the modern-only server it should be"
  else
    log "legacy: python SDK $PY_LEGACY_VERSION -> mcp proxy ($url) -> mcp serve --modern-only"
    client legacy "$LEGACY_VENV/bin/python" "$here/legacy_client.py" "$url"
  fi
fi

if wants control; then
  if [[ $legacy_ok == 0 ]]; then
    fail control "could not install mcp==$PY_LEGACY_VERSION"
  elif ! start serve-modern-only "$MCP_BIN" serve --modern-only --http 127.0.0.1:0; then
    fail control "mcp serve did not start"
  else
    log "control: python SDK $PY_LEGACY_VERSION -> mcp serve --modern-only ($url), no proxy"
    client control "$LEGACY_VENV/bin/python" "$here/legacy_client.py" --refused "$url"
  fi
fi

# The TypeScript SDK 1.x, from tests/interop's lock file (the same install as tests/interop/run.sh).
setup_node() {
  local dir=$root/tests/interop stamp sig
  stamp=$dir/node_modules/.interop-installed
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null || return 1
  sig="$(node --version) $(cksum < "$dir/package.json") $(cksum < "$dir/package-lock.json")"
  [[ -f $stamp && "$(cat "$stamp")" == "$sig" ]] && return 0
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) || return 1
  printf '%s' "$sig" > "$stamp"
}

if wants gateway; then
  mkdir -p "$work/files"
  cat > "$work/gateway.json" <<JSON
{"mcpServers": {
  "everything": {"command": "npx", "args": ["-y", "$EVERYTHING"]},
  "files": {"command": "npx", "args": ["-y", "$FILESYSTEM", "$work/files"]},
  "ref": {"command": "$MCP_BIN", "args": ["serve"]}
}}
JSON
  if ! setup_mcp_venv "$VENV" "$PY_MCP_VERSION"; then
    fail gateway "could not install mcp==$PY_MCP_VERSION"
  elif ! setup_node; then
    fail gateway "could not install tests/interop's node_modules"
  elif ! start gateway "$MCP_BIN" proxy --config "$work/gateway.json" --http 127.0.0.1:0 --timeout 150; then
    fail gateway "the gateway did not start"
  else
    log "gateway: python SDK $PY_MCP_VERSION and TypeScript SDK 1.x -> mcp proxy --config ($url) -> everything, files, ref"
    sed 's/^/    /' "$work/gateway.stderr"
    client gateway-python-modern "$VENV/bin/python" "$here/gateway_client.py" "$url" "$work/files"
    client gateway-ts-legacy node "$root/tests/interop/ts_gateway_client.mjs" "$url" "$work/files"
  fi
fi

echo "e2e-bridge: $passed passed, $failed failed"
[[ $failed == 0 ]]
