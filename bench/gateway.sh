#!/usr/bin/env bash
# The gateway of issue 30 as one server of the suite (bench/servers.toml, `mcp-gateway`), set
# up as `bench/middleware.sh gateway` does it: `mcp proxy --config FILE --http ADDR`, FILE
# naming one server `s` = `mcp serve` over stdio, which the proxy starts as its child. Its echo
# tool is `s_echo` (the gateway prefixes each server's tools with the server's name). Options
# after ADDR go to `mcp proxy`.
#
#   bench/gateway.sh target/release/mcp 127.0.0.1:3000 --max-sessions 100000
#
# This shell stays the parent of the proxy, so that it can remove the config file when it
# ends. The benchmark harness reads the CPU and memory of the whole process tree (this shell,
# idle, the proxy and the upstream: front and upstream counted together) and stops the server
# by its process group, which takes all three. Stopped on its own (SIGTERM or SIGINT), this
# shell stops the proxy, whose upstream child goes with it.
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: bench/gateway.sh MCP ADDR [mcp proxy options]" >&2; exit 2; }
mcp=$(realpath -- "$1")
addr=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/mcpwire-gateway.XXXXXX")
proxy=
trap 'rm -rf -- "$dir"' EXIT
trap '[[ -n $proxy ]] && kill "$proxy" 2>/dev/null; wait; exit 143' TERM INT
python3 -c 'import json, sys; print(json.dumps({"mcpServers": {"s": {"command": sys.argv[1], "args": ["serve"]}}}))' \
  "$mcp" >"$dir/gateway.json"
"$mcp" proxy --config "$dir/gateway.json" --http "$addr" "$@" &
proxy=$!
wait "$proxy"
