#!/usr/bin/env bash
# Runs a server with a Redis of its own: starts redis-server on a free loopback port (nothing
# saved to disk), waits until it answers, then runs the command given, every `{redis}` in its
# arguments replaced by the Redis URL. The benchmark harness stops a server by its process
# group, which takes this Redis with it.
#
#   bench/with-redis.sh target/release/mcp serve --http 127.0.0.1:3000 --store {redis}
set -euo pipefail
command -v redis-server >/dev/null || { echo "with-redis: redis-server is not installed (apt-get install redis-server)" >&2; exit 2; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no --loglevel warning &
for _ in $(seq 200); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.025
done
args=()
for a in "$@"; do args+=("${a//\{redis\}/redis://127.0.0.1:$port}"); done
exec "${args[@]}"
