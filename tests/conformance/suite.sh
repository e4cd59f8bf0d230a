#!/usr/bin/env bash
# The official MCP conformance suite (npm package @modelcontextprotocol/conformance), pinned and
# installed on first use, run one scenario at a time against a server URL or a client command.
#
#   tests/conformance/suite.sh server URL       [GLOB...]
#   tests/conformance/suite.sh client 'COMMAND' [GLOB...]
#
# GLOBs (bash patterns such as 'auth/*' or 'tasks-*') pick scenarios; without any, every scenario
# the suite lists for that side runs. A client COMMAND gets the scenario's URL as its last
# argument (and MCP_CONFORMANCE_SCENARIO etc. in its environment, set by the suite).
#
# Env:
#   SUITE_VERSION   the suite's npm version (default 0.1.16; 0.2.0-alpha.N knows 2026-07-28)
#   SUITE_SPEC      a protocol revision (--spec-version): only its scenarios, run at it
#   SUITE_SKIP      space-separated globs of scenarios to leave out
#   SUITE_OUT       where checks and logs go (default: a new temporary directory)
#   SUITE_TIMEOUT   per client scenario, in ms (default 30000)
#   SUITE_JOBS      scenarios run at once (default 2); their verdicts print in order
#   SUITE_HOME      install directory (default ~/.cache/mcp-conformance/VERSION)
#
# A server scenario fails on any FAILURE check; a client scenario fails on any FAILURE or WARNING
# check, a non-zero exit of the suite, a timeout, or when not a single check passed (the suite
# itself passes a scenario in which the client never connected). One PASS/FAIL/SKIP line per
# scenario, then the counts; exit status 1 when any scenario failed, 2 when nothing could run.
set -uo pipefail

suite_version=${SUITE_VERSION:-0.1.16}
# The MCP SDK the suite's own peers are built on (0.1.16 wants ^1.27.1, 0.2.0-alpha.12 ^1.29.0),
# pinned so that a new SDK release cannot change what we are measured against.
sdk_version=1.32.2
# The suite calls fs.globSync, which appeared in Node 22; an older system Node gets a pinned Node
# from npm (the node-linux-<arch> packages ship the official binaries).
node_pin=22.23.3

usage() { sed -n '2,22s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
side=$1 target=$2
shift 2
[[ $side == server || $side == client ]] || usage

home=${SUITE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/mcp-conformance/$suite_version}

node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node_bin=$(command -v node || true)
packages=("@modelcontextprotocol/conformance@$suite_version" "@modelcontextprotocol/sdk@$sdk_version")
if [[ -z $node_bin || $(node_major "$node_bin") -lt 22 ]]; then
  case $(uname -m) in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "suite.sh: Node >= 22 is needed and none is packaged for $(uname -m)" >&2; exit 2 ;;
  esac
  packages+=("node-linux-$arch@$node_pin")
  node_bin=$home/node_modules/node-linux-$arch/bin/node
fi

stamp="$home/.installed"
if [[ ! -x $node_bin || ! -f $stamp || $(cat "$stamp") != "${packages[*]}" ]]; then
  command -v npm >/dev/null || { echo "suite.sh: npm is needed to install the suite" >&2; exit 2; }
  echo "suite.sh: installing ${packages[*]} into $home" >&2
  rm -rf "$home" && mkdir -p "$home" && printf '{"private":true}\n' >"$home/package.json"
  if ! (cd "$home" && npm install --save-exact --no-audit --no-fund --loglevel=error "${packages[@]}") >&2; then
    echo "suite.sh: npm install failed" >&2
    exit 2
  fi
  printf '%s' "${packages[*]}" >"$stamp"
fi
# Node's compile cache (22.1 and later; an older Node ignores the variable) keeps the suite's
# modules compiled between runs: a quarter of the second start's time on 2 cores, and every
# scenario is a start.
export NODE_COMPILE_CACHE=${NODE_COMPILE_CACHE:-$home/.compile-cache}
suite=("$node_bin" "$home/node_modules/@modelcontextprotocol/conformance/dist/index.js")

spec_args=()
[[ -n ${SUITE_SPEC:-} ]] && spec_args=(--spec-version "$SUITE_SPEC")

# `list` prints a "Server scenarios" and a "Client scenarios" section, one "  - NAME ..." line
# per scenario; keep the names of this side's section.
heading="${side^} scenarios"
mapfile -t scenarios < <("${suite[@]}" list "--$side" "${spec_args[@]}" |
  awk -v h="$heading" 'index($0, h) == 1 { on = 1; next } on && /^$/ { on = 0 } on && /^  - / { print $2 }')
[[ ${#scenarios[@]} -gt 0 ]] || { echo "suite.sh: the suite listed no $side scenarios" >&2; exit 2; }

wanted() {
  local name=$1 glob
  shift
  read -ra skip <<<"${SUITE_SKIP:-}"
  for glob in "${skip[@]}"; do
    # shellcheck disable=SC2053  # a glob on purpose
    [[ $name == $glob ]] && return 1
  done
  [[ $# -eq 0 ]] && return 0
  for glob in "$@"; do
    # shellcheck disable=SC2053
    [[ $name == $glob ]] && return 0
  done
  return 1
}

out=${SUITE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/mcp-suite.XXXXXX")}
mkdir -p "$out" && out=$(cd "$out" && pwd)
client_ms=${SUITE_TIMEOUT:-30000}

# Reads one checks.json: first line "S ok, F failed, W warnings", then one line per bad check.
# shellcheck disable=SC2016  # JavaScript
tally='const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const count = (s) => checks.filter((c) => c.status === s).length;
console.log(`${count("SUCCESS")} ok, ${count("FAILURE")} failed, ${count("WARNING")} warnings`);
for (const c of checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING"))
  console.log(`    ${c.status} ${c.id}: ${String(c.errorMessage || c.description).split("\n")[0].slice(0, 200)}`);'

# One scenario: runs it, then writes its verdict to $dir.verdict: "PASS"/"FAIL"/"SKIP" on the
# first line, the line to print on the second, details after.
one() {
  local name=$1 dir=$out/${1//\//_} cmd limit rc checks detail first
  rm -rf "$dir"
  if [[ $side == server ]]; then
    cmd=(server --url "$target" --scenario "$name")
    limit=180 # the 0.1.x suite has no timeout of its own on the server side
  else
    cmd=(client --command "$target" --scenario "$name" --timeout "$client_ms")
    limit=$((client_ms / 1000 + 60))
  fi
  timeout "$limit" "${suite[@]}" "${cmd[@]}" "${spec_args[@]}" -o "$dir" >"$dir.log" 2>&1
  rc=$?
  if grep -q '^SKIPPED: ' "$dir.log"; then
    printf 'SKIP\nSKIP %s (not part of %s)\n' "$name" "${SUITE_SPEC:-this revision}" >"$dir.verdict"
    return
  fi
  checks=$(find "$dir" -name checks.json 2>/dev/null | head -n 1)
  detail=""
  [[ -n $checks ]] && detail=$("$node_bin" -e "$tally" "$checks")
  [[ -n $detail ]] || detail="no checks recorded"
  first=${detail%%$'\n'*}
  ((rc == 124)) && first="killed after ${limit}s; $first"
  if [[ $side == client && $rc == 0 && $first != [1-9]* ]]; then
    rc=1 first="$first; no check passed"
  fi
  if [[ $rc == 0 ]]; then
    printf 'PASS\nPASS %s (%s)\n' "$name" "$first" >"$dir.verdict"
  else
    { printf 'FAIL\nFAIL %s (%s; exit %s)\n' "$name" "$first" "$rc"
      { [[ $detail == *$'\n'* ]] && echo "${detail#*$'\n'}"
        grep -E 'CLIENT (TIMED OUT|EXITED)|Unknown scenario' "$dir.log" | sed 's/^ */    /'; } | head -n 6
    } >"$dir.verdict"
  fi
}

# Scenarios run $jobs at a time (each has its own suite process, and on the client side its own
# test server and client; on the server side each opens its own session), and their verdicts
# are printed in the suite's order. Most of a scenario's time is the suite's Node starting, so
# two at once use both cores of a 2-core runner.
jobs=${SUITE_JOBS:-2}
picked=() pids=()
for name in "${scenarios[@]}"; do
  wanted "$name" "$@" && picked+=("$name")
done
pass=0 fail=0 next=0
report() { # waits for the oldest scenario still running, and prints its verdict
  local verdict=$out/${picked[$next]//\//_}.verdict kind
  wait "${pids[$next]}"
  [[ -s $verdict ]] || printf 'FAIL\nFAIL %s (no verdict: its runner died)\n' "${picked[$next]}" >"$verdict"
  { read -r kind; cat; } <"$verdict"
  case $kind in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; esac
  next=$((next + 1))
}
for i in "${!picked[@]}"; do
  one "${picked[$i]}" &
  pids[i]=$!
  while ((i + 1 - next >= jobs)); do report; done
done
while ((next < ${#picked[@]})); do report; done
echo "checks and logs: $out"
echo "$pass passed, $fail failed"
((fail == 0))
