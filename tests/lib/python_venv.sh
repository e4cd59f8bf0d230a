# Sourced by the test scripts: a virtualenv with one pinned release of the official Python MCP
# SDK, installed once and reused by every script that asks for the same release.
#
#   setup_mcp_venv DIR VERSION
#
# The pins (the SDK and every package it pulls in, a `pip freeze`) live in
# tests/python/mcp-VERSION.txt. A venv whose stamp matches the interpreter and that file is
# left alone, so a second run installs nothing. Needs a `log` function from the caller.
# Env: PYTHON, the interpreter the venv is made from (default python3; needs >= 3.10).

MCP_PY_PINS_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../python" && pwd)

setup_mcp_venv() {
  local dir=$1 version=$2 py=${PYTHON:-python3} pins sig
  pins="$MCP_PY_PINS_DIR/mcp-$version.txt"
  [[ -f $pins ]] || { echo "setup_mcp_venv: no pins for mcp $version ($pins)" >&2; return 1; }
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    echo "$py is missing or older than 3.10 (the mcp SDK needs >= 3.10)" >&2
    return 1
  fi
  sig=$( { "$py" -c 'import sys; print(sys.version)' && cat "$pins"; } | cksum) || return 1
  if [[ -x $dir/bin/python && -f $dir/.mcp-installed && "$(cat "$dir/.mcp-installed")" == "$sig" ]]; then
    log "python venv up to date ($dir, mcp $version)"
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
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    -c "$pins" "mcp==$version" || return 1
  printf '%s' "$sig" > "$dir/.mcp-installed"
}
