"""Benchmark peer: echo server on the official Python MCP SDK (mcp 2.x).

    python server.py stdio
    python server.py http PORT sessions    Streamable HTTP, stateful (Mcp-Session-Id), SSE responses
    python server.py http PORT stateless   Streamable HTTP, stateless, JSON responses

One tool, `echo`, returning its `text` argument as a single text block (no
structured content). Logging at WARNING; uvicorn (uvloop + httptools) without
access logs.
"""

from __future__ import annotations

import sys

from mcp.server import MCPServer

mcp = MCPServer("python-echo", version="0.0.0", log_level="WARNING")


# `async def` so the SDK calls it inline (a sync tool is run in a worker
# thread); `structured_output=False` so the result is a single text block.
@mcp.tool(description="Echo the text back", structured_output=False)
async def echo(text: str) -> str:
    return text


def usage() -> None:
    print("usage: server.py stdio | server.py http PORT (sessions|stateless)", file=sys.stderr)
    sys.exit(2)


def serve_http(port: int, stateless: bool) -> None:
    import uvicorn

    app = mcp.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=stateless,
        json_response=stateless,
        host="127.0.0.1",
    )
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        # What `uvicorn[standard]` deployments run; pinned in requirements.txt.
        loop="uvloop",
        http="httptools",
        # Do not wait long for open SSE streams on SIGTERM.
        timeout_graceful_shutdown=2,
    )
    uvicorn.Server(config).run()


def main(argv: list[str]) -> None:
    if argv == ["stdio"]:
        mcp.run("stdio")
    elif len(argv) == 3 and argv[0] == "http" and argv[1].isdigit() and argv[2] in ("sessions", "stateless"):
        serve_http(int(argv[1]), stateless=argv[2] == "stateless")
    else:
        usage()


if __name__ == "__main__":
    main(sys.argv[1:])
