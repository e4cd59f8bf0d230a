#!/usr/bin/env python3
"""The hostile pattern of issue 13, against `mcp serve --http`: SESSIONS legacy sessions
(2025-11-25) each make CALLS progress-streaming calls (`test_long_running_task`, STEPS
steps, no delay: about 200 bytes of event per step) and hang up as soon as the response
headers arrive. The calls run on and their events are kept for resumption. Prints the
server's RSS before, just after, and once the calls have finished.

    scripts/hostile_events.py MCP_BINARY [SESSIONS CALLS STEPS] [-- extra serve flags]

Standard library only; the server binds 127.0.0.1 on a free port and is stopped at the end.
"""
import json
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def post(port, body, session=None, read_body=True):
    """One POST on its own connection; returns (status, headers, body or None)."""
    data = json.dumps(body).encode()
    head = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        f"Content-Length: {len(data)}",
        "MCP-Protocol-Version: 2025-11-25",
    ]
    if session:
        head.append(f"Mcp-Session-Id: {session}")
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    header_text, _, rest = buf.partition(b"\r\n\r\n")
    lines = header_text.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
    if not read_body:
        sock.close()  # hang up after the headers
        return status, headers, None
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    sock.close()
    return status, headers, rest


def session(port):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "0"}}}
    status, headers, _ = post(port, init)
    assert status == 200, status
    sid = headers["mcp-session-id"]
    status, _, _ = post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    assert status == 202, status
    return sid


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    binary = args[0]
    sessions, calls, steps = (int(a) for a in (args[1:4] if len(args) >= 4 else (100, 17, 1000)))
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{port}", *extra],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        before = rss_kib(server.pid)
        start = time.time()
        for _ in range(sessions):
            sid = session(port)
            for i in range(calls):
                call = {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {
                    "name": "test_long_running_task", "arguments": {"steps": steps, "delayMs": 0},
                    "_meta": {"progressToken": i}}}
                post(port, call, sid, read_body=False)
        elapsed = time.time() - start
        after = rss_kib(server.pid)
        time.sleep(3)  # the calls run on to their end
        settled = rss_kib(server.pid)
        print(json.dumps({"sessions": sessions, "calls_per_session": calls, "steps": steps, "extra": extra,
                          "seconds": round(elapsed, 1), "rss_before_mib": round(before / 1024, 1),
                          "rss_after_mib": round(after / 1024, 1), "rss_settled_mib": round(settled / 1024, 1),
                          "added_mib": round((settled - before) / 1024, 1)}))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
