"""The official Python SDK 1.x (legacy era: `initialize`, one session) through the balancer.

    python legacy_client.py URL READY_FILE STOP_FILE MIN_CALLS

One session for the whole run: every request of it reaches either instance (haproxy has no
affinity), and each instance is restarted under it, so the session must live in the shared
store. The SDK opens a GET stream too; the instance holding it ends it with a `retry:` hint
when it is told to stop, and the SDK reconnects through the balancer. The GET streams opened
are counted and printed (the check on them is run.sh's, which knows whether a restart ran).
See calls.py for the calls and what counts as a failure.
"""

from __future__ import annotations

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import calls

LEGACY_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def run_client(tally: calls.Tally, url: str, ready_file: str, stop_file: str, min_calls: int) -> None:
    get_streams = []  # the status of every GET (stream) the SDK opened

    async def on_response(response: httpx.Response) -> None:
        if response.request.method == "GET":
            get_streams.append(response.status_code)

    http = httpx.AsyncClient(timeout=httpx.Timeout(30, read=60), event_hooks={"response": [on_response]})
    async with http, streamable_http_client(url, http_client=http) as (read, write, session_id):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            if str(init.protocolVersion) not in LEGACY_VERSIONS:
                raise RuntimeError(f"negotiated {init.protocolVersion}, not a legacy revision")
            print(f"{calls.now()} legacy: session {session_id()} at {init.protocolVersion}", flush=True)

            async def call(name: str, args: dict, on_progress: calls.Progress | None) -> tuple[bool, str]:
                r = await session.call_tool(name, args, progress_callback=on_progress)
                return r.isError, text_of(r)

            await calls.run(tally, call, ready_file, stop_file, min_calls)
    print(f"legacy: GET streams opened: {len(get_streams)} (statuses {get_streams})", flush=True)


if __name__ == "__main__":
    calls.main("legacy", "python SDK 1.x", run_client)
