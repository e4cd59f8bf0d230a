#!/usr/bin/env bash
# Runs the benchmark suite: builds `mcp` and `mcpwire-bench`, prepares the peer servers (rmcp, the
# TypeScript and Python SDKs) when bench/peers/setup.sh exists, then runs
# `mcpwire-bench suite` with the arguments given (see `target/release/mcpwire-bench suite --help`):
#
#   bench/run.sh                               # everything: docs/BENCHMARKS.md, docs/bench-*.svg, bench/results/
#   bench/run.sh --smoke                       # quick check of our servers (CI), into target/bench-smoke/
#   bench/run.sh --only mcp,rmcp --runs 1 --duration 3
#
# Servers run pinned to the first usable CPU and the load generator to the second.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

cargo build --release -p mcpwire-cli -p mcpwire-bench
if [[ -f bench/peers/setup.sh ]]; then
  bash bench/peers/setup.sh
fi
exec target/release/mcpwire-bench suite "$@"
