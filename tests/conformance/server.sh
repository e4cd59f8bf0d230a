#!/usr/bin/env bash
# The official MCP conformance suite against `mcp serve --http`, server side:
# suite 0.1.16 (every scenario), suite 0.2.0-alpha.12 at 2026-07-28 and at 2025-11-25, and the
# 0.2.0-alpha.12 tasks extension scenarios.
# The suite is installed and run by suite.sh, beside this script.
#
#   tests/conformance/server.sh          # all three runs
# Env: MCP_BIN (default target/release/mcp), CONFORMANCE_PORT (default: a free port)
# Exits non-zero if any run has a failing scenario.
set -uo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
bin=${MCP_BIN:-target/release/mcp}
port=${CONFORMANCE_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
runner=tests/conformance/suite.sh

"$bin" serve --http "127.0.0.1:$port" 2>/tmp/mcp-conformance-server.log &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
for _ in $(seq 50); do
  (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
kill -0 $server 2>/dev/null || { echo "the server did not start:" >&2; cat /tmp/mcp-conformance-server.log >&2; exit 1; }

url="http://127.0.0.1:$port/mcp"
failed=0
run() {
  echo "==> conformance server: $*"
  env "$@" bash "$runner" server "$url" || failed=$((failed + 1))
}
run SUITE_VERSION=0.1.16
run SUITE_VERSION=0.2.0-alpha.12 SUITE_SPEC=2026-07-28
run SUITE_VERSION=0.2.0-alpha.12 SUITE_SPEC=2025-11-25
# The tasks extension's scenarios are listed only without a spec version.
echo "==> conformance server: SUITE_VERSION=0.2.0-alpha.12 tasks-*"
SUITE_VERSION=0.2.0-alpha.12 bash "$runner" server "$url" 'tasks-*' || failed=$((failed + 1))
kill -0 $server 2>/dev/null || { echo "the server died during the runs" >&2; failed=$((failed + 1)); }
echo "conformance server: $failed run(s) failed"
exit $((failed > 0))
