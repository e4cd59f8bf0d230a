"""The official Python SDK 2.x at 2026-07-28 (stateless: no session) through the balancer.

    python modern_client.py URL READY_FILE STOP_FILE MIN_CALLS

Every call is a POST of its own, balanced to either instance; a call in flight on an instance
told to stop must still be answered (the shutdown grace), and a call that reaches an instance
that has stopped accepting must be retried elsewhere by haproxy. See calls.py for the calls
and what counts as a failure.
"""

from __future__ import annotations

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import calls

MODERN = "2026-07-28"


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def run_client(tally: calls.Tally, url: str, ready_file: str, stop_file: str, min_calls: int) -> None:
    async with Client(streamable_http_client(url)) as client:
        if client.protocol_version != MODERN:
            raise RuntimeError(f"negotiated {client.protocol_version}, not {MODERN}")

        async def call(name: str, args: dict, on_progress: calls.Progress | None) -> tuple[bool, str]:
            r = await client.call_tool(name, args, progress_callback=on_progress)
            return r.is_error, text_of(r)

        await calls.run(tally, call, ready_file, stop_file, min_calls)


if __name__ == "__main__":
    calls.main("modern", "python SDK 2.x", run_client)
