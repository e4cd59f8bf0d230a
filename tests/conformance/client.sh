#!/usr/bin/env bash
# The official MCP conformance suite against our conformance client (target/release/conformance-client),
# client side: suite 0.1.16, and suite 0.2.0-alpha.12 at 2026-07-28 and at 2025-11-25.
# Every scenario runs, the authorization ones (auth/*, OAuth 2.1 through mcpwire-auth) included.
#
#   tests/conformance/client.sh
# Env: CONFORMANCE_CLIENT (default target/release/conformance-client)
# Exits non-zero if any run has a failing scenario.
set -uo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
client=${CONFORMANCE_CLIENT:-target/release/conformance-client}
runner=tests/conformance/suite.sh
[[ -x $client ]] || { echo "$client not built (cargo build --release)" >&2; exit 2; }

failed=0
run() {
  echo "==> conformance client: $*"
  env "$@" bash "$runner" client "$client" || failed=$((failed + 1))
}
run SUITE_VERSION=0.1.16
run SUITE_VERSION=0.2.0-alpha.12 SUITE_SPEC=2026-07-28
run SUITE_VERSION=0.2.0-alpha.12 SUITE_SPEC=2025-11-25
echo "conformance client: $failed run(s) failed"
exit $((failed > 0))
