#!/usr/bin/env bash
# Installs the peer MCP servers used by the side-by-side benchmarks.
#
#   bash bench/peers/setup.sh        (from any directory)
#
# Steps (each skippable):
#   rmcp    cargo build --release --locked of bench/peers/rmcp  BENCH_SKIP_RMCP=1
#           -> bench/peers/rmcp/target/release/rmcp-echo (and rmcp-client-load)
#   ts      npm ci in bench/peers/ts                            BENCH_SKIP_TS=1
#           -> bench/peers/ts/node_modules
#   python  venv from bench/peers/python/requirements.txt       BENCH_SKIP_PYTHON=1
#           -> target/bench-venv (override with BENCH_VENV=/path)
#
# Idempotent: a second run does nothing costly. cargo's own freshness check
# is the rmcp stamp; ts and python keep a stamp holding the sha256 of their
# lockfile (plus the node / python version), and reinstall only when it
# changes. BENCH_FORCE=1 ignores the stamps.
set -euo pipefail

PEERS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$PEERS/../.." && pwd)"
VENV="${BENCH_VENV:-$ROOT/target/bench-venv}"
PYTHON="${BENCH_PYTHON:-python3}"
FORCE="${BENCH_FORCE:-0}"

say() { printf '[bench-peers] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
is_set() { [ "${1:-0}" = "1" ]; }

sha256_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------- rmcp
step_rmcp() {
    if is_set "${BENCH_SKIP_RMCP:-0}"; then say "rmcp: skipped (BENCH_SKIP_RMCP=1)"; return; fi
    command -v cargo >/dev/null || die "rmcp: cargo not found"
    say "rmcp: cargo build --release (a no-op when up to date)"
    # The target dir is pinned so the binary lands where the harness looks,
    # whatever CARGO_TARGET_DIR the caller has.
    CARGO_TARGET_DIR="$PEERS/rmcp/target" \
        cargo build --release --locked --quiet --manifest-path "$PEERS/rmcp/Cargo.toml"
    for bin in rmcp-echo rmcp-client-load; do
        [ -x "$PEERS/rmcp/target/release/$bin" ] || die "rmcp: $bin missing after build"
    done
    say "rmcp: ready: $PEERS/rmcp/target/release/rmcp-echo"
}

# ---------------------------------------------------------------- ts
step_ts() {
    if is_set "${BENCH_SKIP_TS:-0}"; then say "ts: skipped (BENCH_SKIP_TS=1)"; return; fi
    command -v node >/dev/null || die "ts: node not found (Node >= 20 required)"
    command -v npm >/dev/null || die "ts: npm not found"
    local major
    major="$(node -p 'process.versions.node.split(".")[0]')"
    [ "$major" -ge 20 ] || die "ts: Node >= 20 required, found $(node --version)"
    local stamp_file="$PEERS/ts/node_modules/.bench-stamp"
    local want
    want="$( { sha256_of "$PEERS/ts/package.json" "$PEERS/ts/package-lock.json"; node --version; } | sha256sum | cut -d' ' -f1)"
    if [ "$FORCE" != "1" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want" ]; then
        say "ts: up to date (node_modules matches package-lock.json)"
        return
    fi
    say "ts: npm ci"
    (cd "$PEERS/ts" && npm ci --no-audit --no-fund --loglevel=error) >&2
    printf '%s\n' "$want" >"$stamp_file"
    say "ts: ready: node $PEERS/ts/server.mjs"
}

# ---------------------------------------------------------------- python
step_python() {
    if is_set "${BENCH_SKIP_PYTHON:-0}"; then say "python: skipped (BENCH_SKIP_PYTHON=1)"; return; fi
    command -v "$PYTHON" >/dev/null || die "python: $PYTHON not found (set BENCH_PYTHON)"
    local req="$PEERS/python/requirements.txt"
    local stamp_file="$VENV/.bench-stamp"
    local pyver want
    pyver="$("$PYTHON" -c 'import sys; print(sys.version)')"
    want="$( { sha256_of "$req"; printf '%s\n' "$pyver"; } | sha256sum | cut -d' ' -f1)"
    if [ "$FORCE" != "1" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want" ] \
        && [ -x "$VENV/bin/python" ]; then
        say "python: up to date ($VENV matches requirements.txt)"
        return
    fi
    # A venv built by another interpreter version is rebuilt from scratch.
    if [ -x "$VENV/bin/python" ] \
        && [ "$("$VENV/bin/python" -c 'import sys; print(sys.version)')" != "$pyver" ]; then
        say "python: $VENV was made by another Python; recreating it"
        rm -rf "$VENV"
    fi
    if [ ! -x "$VENV/bin/python" ]; then
        say "python: creating venv $VENV"
        mkdir -p "$(dirname "$VENV")"
        "$PYTHON" -m venv "$VENV"
    fi
    say "python: pip install -r requirements.txt"
    rm -f "$stamp_file"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --require-virtualenv -r "$req"
    printf '%s\n' "$want" >"$stamp_file"
    say "python: ready: $VENV/bin/python $PEERS/python/server.py"
}

step_rmcp
step_ts
step_python
say "done"
