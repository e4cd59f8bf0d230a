#!/usr/bin/env bash
# Interop tests: the official Python and TypeScript MCP SDKs, as stdio clients, against our
# server (`$MCP_BIN serve`).
#
#   tests/interop/run.sh            # both clients
#   tests/interop/run.sh python     # only one of them: python | ts
#
# Installs what it needs, idempotently (a second run installs nothing):
#   - a Python venv at target/interop-venv with the `mcp` SDK pinned below (and its
#     dependencies pinned too), from PyPI;
#   - tests/interop/node_modules from package.json + package-lock.json (`npm ci`).
# Env: MCP_BIN   the server binary (default: target/release/mcp, relative to the repo root)
#      PYTHON    the interpreter the venv is made from (default: python3; needs >= 3.10)
# Works from any directory. Exits non-zero if either client fails (or cannot be installed).
# The last line is `interop: N passed, N failed`, counting the clients.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
cd "$root"

# The Python SDK and every package it pulls in, pinned (a `pip freeze` of the venv).
PY_MCP_VERSION=1.30.0
PY_CONSTRAINTS="
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
mcp==$PY_MCP_VERSION
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
VENV=$root/target/interop-venv
CLIENT_TIMEOUT=180  # seconds; each client also bounds itself (60 s in all)

MCP_BIN=${MCP_BIN:-target/release/mcp}
case $MCP_BIN in /*) ;; */*) MCP_BIN=$root/$MCP_BIN ;; *) MCP_BIN=$(command -v "$MCP_BIN" || echo "$MCP_BIN") ;; esac

want=("$@")
[[ ${#want[@]} -gt 0 ]] || want=(python ts)
for w in "${want[@]}"; do
  [[ $w == python || $w == ts ]] || { echo "run.sh: unknown client '$w' (python | ts)" >&2; exit 2; }
done
wants() { [[ " ${want[*]} " == *" $1 "* ]]; }

log() { echo "interop: $*"; }

if [[ ! -x $MCP_BIN ]]; then
  echo "interop: the server binary $MCP_BIN is missing or not executable" \
       "(build it with 'cargo build --release', or point MCP_BIN at it)" >&2
  exit 1
fi

setup_python() {
  local py=${PYTHON:-python3} stamp="$VENV/.interop-installed" sig
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "interop: $py is missing or older than 3.10 (the mcp SDK needs >= 3.10)" >&2
    return 1
  fi
  sig=$( { "$py" -c 'import sys; print(sys.version)' && echo "$PY_CONSTRAINTS"; } | cksum) || return 1
  if [[ -x $VENV/bin/python && -f $stamp && "$(cat "$stamp")" == "$sig" ]]; then
    log "python venv up to date ($VENV, mcp $PY_MCP_VERSION)"
    return 0
  fi
  log "installing mcp==$PY_MCP_VERSION into $VENV"
  rm -rf "$VENV"
  if ! "$py" -m venv "$VENV"; then
    # Debian's own python3 ships venv (ensurepip) in a separate package.
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      log "python3 -m venv failed: installing Debian's python3-venv"
      rm -rf "$VENV"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null \
        || { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >/dev/null; }
      "$py" -m venv "$VENV" || return 1
    else
      return 1
    fi
  fi
  local constraints="$VENV/interop-constraints.txt"
  printf '%s\n' "$PY_CONSTRAINTS" > "$constraints"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    -c "$constraints" "mcp==$PY_MCP_VERSION" || return 1
  printf '%s' "$sig" > "$stamp"
}

setup_node() {
  local stamp="$here/node_modules/.interop-installed" sig
  if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' 2>/dev/null; then
    echo "interop: node is missing or older than 18 (the TypeScript SDK needs >= 18)" >&2
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

passed=0 failed=0
run_client() {  # NAME COMMAND...
  local name=$1; shift
  log "running the $name client against $MCP_BIN serve"
  local rc=0
  timeout --kill-after=10 "$CLIENT_TIMEOUT" "$@" "$MCP_BIN" serve || rc=$?
  if [[ $rc == 0 ]]; then
    passed=$((passed + 1)); log "PASS $name client"
  else
    failed=$((failed + 1))
    [[ $rc == 124 ]] && log "the $name client did not finish within ${CLIENT_TIMEOUT}s"
    log "FAIL $name client (exit $rc)"
  fi
}

if wants python; then
  if setup_python; then
    run_client python "$VENV/bin/python" "$here/python_client.py"
  else
    failed=$((failed + 1)); log "FAIL python client (could not install the Python SDK)"
  fi
fi
if wants ts; then
  if setup_node; then
    run_client ts node "$here/ts_client.mjs"
  else
    failed=$((failed + 1)); log "FAIL ts client (could not install the TypeScript SDK)"
  fi
fi

echo "interop: $passed passed, $failed failed"
[[ $failed == 0 ]]
