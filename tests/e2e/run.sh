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
#
#   tests/e2e/run.sh                 # all three
#   tests/e2e/run.sh modern legacy   # some of them
#
# Installs what it needs, idempotently (a second run installs nothing): two Python venvs,
# target/e2e-venv (mcp 2.x) and target/e2e-venv-legacy (mcp 1.x), each with every package
# pinned (a `pip freeze` of it, below). npx fetches server-everything on first use.
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

# The modern SDK and every package it pulls in, pinned (a `pip freeze` of the venv).
PY_MCP_VERSION=2.3.0
PY_CONSTRAINTS="
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
h11==0.16.0
httpcore2==2.16.2
httpx2==2.16.2
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
mcp==$PY_MCP_VERSION
mcp-types==$PY_MCP_VERSION
opentelemetry-api==1.45.2
pycparser==3.12
pydantic==2.14.3
pydantic_core==2.50.4
PyJWT==2.15.1
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
sse-starlette==3.7.0
starlette==1.10.0
truststore==0.10.5
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.54.0
"
# The legacy SDK (the one tests/interop runs), pinned the same way.
PY_LEGACY_VERSION=1.30.0
PY_LEGACY_CONSTRAINTS="
annotated-types==0.8.0
anyio==4.16.0
attrs==26.1.0
certifi==2026.10.18
cffi==2.1.1
click==8.5.1
cryptography==50.0.2
h11==0.16.0
httpcore==1.0.9
httpx==0.28.1
httpx-sse==0.4.3
idna==3.20
jsonschema==4.26.0
jsonschema-specifications==2025.9.1
mcp==$PY_LEGACY_VERSION
pycparser==3.12
pydantic==2.14.3
pydantic-settings==2.16.3
pydantic_core==2.50.4
PyJWT==2.15.1
python-dotenv==1.2.4
python-multipart==0.0.34
referencing==0.37.0
rpds-py==2026.9.1
sse-starlette==3.7.0
starlette==1.10.0
typing-inspection==0.4.5
typing_extensions==4.16.0
uvicorn==0.54.0
"
VENV=$root/target/e2e-venv
LEGACY_VENV=$root/target/e2e-venv-legacy
START_TIMEOUT=180  # seconds for a proxy to be serving (npx may download the package first)
CLIENT_TIMEOUT=150 # seconds for one client script (each bounds itself to 90 s as well)

MCP_BIN=${MCP_BIN:-target/release/mcp}
case $MCP_BIN in /*) ;; */*) MCP_BIN=$root/$MCP_BIN ;; *) MCP_BIN=$(command -v "$MCP_BIN" || echo "$MCP_BIN") ;; esac

all_cases=(modern legacy control)
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

# ---- the venvs ----

# setup_venv DIR VERSION CONSTRAINTS
setup_venv() {
  local dir=$1 version=$2 constraints=$3 py=${PYTHON:-python3} stamp="$1/.e2e-installed" sig
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "e2e-bridge: $py is missing or older than 3.10 (the mcp SDK needs >= 3.10)" >&2
    return 1
  fi
  sig=$( { "$py" -c 'import sys; print(sys.version)' && echo "$constraints"; } | cksum) || return 1
  if [[ -x $dir/bin/python && -f $stamp && "$(cat "$stamp")" == "$sig" ]]; then
    log "venv up to date ($dir, mcp $version)"
    return 0
  fi
  log "installing mcp==$version into $dir"
  rm -rf "$dir"
  if ! "$py" -m venv "$dir"; then
    # Debian's own python3 ships venv (ensurepip) in a separate package.
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      log "python3 -m venv failed: installing Debian's python3-venv"
      rm -rf "$dir"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null; }
      "$py" -m venv "$dir" || return 1
    else
      return 1
    fi
  fi
  printf '%s\n' "$constraints" > "$dir/e2e-constraints.txt"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    -c "$dir/e2e-constraints.txt" "mcp==$version" || return 1
  printf '%s' "$sig" > "$stamp"
}

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
  if ! setup_venv "$VENV" "$PY_MCP_VERSION" "$PY_CONSTRAINTS"; then
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
  setup_venv "$LEGACY_VENV" "$PY_LEGACY_VERSION" "$PY_LEGACY_CONSTRAINTS" || legacy_ok=0
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

echo "e2e-bridge: $passed passed, $failed failed"
[[ $failed == 0 ]]
