"""A handshake-era client (the official Python SDK, 1.x) through `mcp proxy` to a modern-only server.

    python legacy_client.py URL
    python legacy_client.py --refused URL

URL is `mcp proxy "mcp serve --modern-only" --http ADDR`'s /mcp endpoint. `mcp serve
--modern-only` refuses `initialize` (it speaks 2026-07-28 alone); the proxy speaks 2026-07-28
to it and both eras downstream, so this client, which knows nothing newer than 2025-11-25,
must connect with the `initialize` handshake at a legacy revision and still reach the
reference server's tools, progress, sampling and elicitation (the upstream's `input_required`
rounds turned into real requests to this client), resources and prompts. With `--refused`,
URL is `mcp serve --modern-only --http ADDR` itself, and the check is the control: without the
proxy, the same client's `initialize` is refused with an error that names 2026-07-28. Exits 0
when every check passes, 1 otherwise (each check is printed).
"""

from __future__ import annotations

import json
import sys
from datetime import timedelta
from typing import Any

import anyio
import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

LEGACY_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}
DEADLINE = 90  # seconds for the whole run
REQUEST_TIMEOUT = timedelta(seconds=30)
SAMPLING_REPLY = "a reply from the legacy client"

failures: list[str] = []


def check(name: str, ok: bool, detail: object = "") -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail}"), flush=True)
    if not ok:
        failures.append(name)


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main(url: str) -> None:
    # Every request this client sends, as seen on the wire: (protocol-version header, JSON body).
    sent: list[tuple[str | None, Any]] = []
    session_ids: set[str] = set()

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            try:
                body = json.loads(request.content)
            except ValueError:
                body = None
            sent.append((request.headers.get("mcp-protocol-version"), body))

    async def on_response(response: httpx.Response) -> None:
        if sid := response.headers.get("mcp-session-id"):
            session_ids.add(sid)

    asked: dict[str, list[Any]] = {"sampling": [], "elicitation": []}

    async def on_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked["sampling"].append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLING_REPLY),
            model="e2e-model",
            stopReason="endTurn",
        )

    async def on_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked["elicitation"].append(params)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})

    http = httpx.AsyncClient(
        timeout=httpx.Timeout(30, read=60), event_hooks={"request": [record], "response": [on_response]}
    )
    async with http, streamable_http_client(url, http_client=http) as (read, write, _):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=REQUEST_TIMEOUT,
            sampling_callback=on_sampling,
            elicitation_callback=on_elicitation,
        ) as session:
            init = await session.initialize()
            version = str(init.protocolVersion)
            check(f"initialize negotiated a legacy revision ({version})", version in LEGACY_VERSIONS, version)
            check("serverInfo present", bool(init.serverInfo.name), init.serverInfo)
            check("tools capability", init.capabilities.tools is not None, init.capabilities)

            names = [t.name for t in (await session.list_tools()).tools]
            for name in ("echo", "test_tool_with_progress", "test_sampling", "test_elicitation"):
                check(f"tools/list has {name}", name in names, names)

            r = await session.call_tool("echo", {"text": "legacy in, modern out"})
            check("tools/call echo", not r.isError and text_of(r) == "legacy in, modern out", r)

            progress: list[tuple[float, float | None]] = []

            async def on_progress(p: float, total: float | None, message: str | None) -> None:
                progress.append((p, total))

            r = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            values = [p for p, _ in progress]
            check(
                "progress notifications reach the legacy client",
                not r.isError
                and len(values) == 3
                and all(a < b for a, b in zip(values, values[1:]))
                and all(t == 100 for _, t in progress),
                progress,
            )

            r = await session.call_tool("test_sampling", {"prompt": "What is 2+2?"})
            check(
                "sampling: the modern server's question put to the legacy client",
                not r.isError and len(asked["sampling"]) == 1 and SAMPLING_REPLY in text_of(r),
                (asked["sampling"], r),
            )

            r = await session.call_tool("test_elicitation", {"message": "Who are you?"})
            check(
                "elicitation: the modern server's question put to the legacy client",
                not r.isError
                and len(asked["elicitation"]) == 1
                and asked["elicitation"][0].message == "Who are you?"
                and "ada@example.com" in text_of(r),
                (asked["elicitation"], r),
            )

            r = await session.read_resource("test://static-text")
            check(
                "resources/read",
                [getattr(c, "text", None) for c in r.contents]
                == ["This is the content of the static text resource."],
                r,
            )

            r = await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
            check(
                "prompts/get",
                len(r.messages) >= 1
                and "hello" in r.messages[0].content.text
                and "world" in r.messages[0].content.text,
                r,
            )

    methods = [b.get("method") for _, b in sent if isinstance(b, dict)]
    check("initialize on the wire, first", methods[:1] == ["initialize"], methods)
    check("no server/discover on the wire", "server/discover" not in methods, methods)
    check("the proxy gave a session id", len(session_ids) == 1, session_ids)
    later = {v for v, b in sent[1:] if isinstance(b, dict)}
    check("every later request carries the negotiated version", later == {version}, later)


async def refused(url: str) -> None:
    async with streamable_http_client(url) as (read, write, _):
        async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT) as session:
            try:
                init = await session.initialize()
            except McpError as e:
                check("initialize refused, naming 2026-07-28", "2026-07-28" in json.dumps(e.error.model_dump()), e.error)
            else:
                check("initialize refused, naming 2026-07-28", False, f"accepted: {init.protocolVersion}")


async def bounded(url: str, control: bool) -> None:
    with anyio.fail_after(DEADLINE):
        await (refused(url) if control else main(url))


if __name__ == "__main__":
    control = sys.argv[1] == "--refused"
    url = sys.argv[-1]
    print(f"legacy client (python SDK) -> {url}" + (" (directly: must be refused)" if control else ""), flush=True)
    try:
        anyio.run(bounded, url, control)
    except Exception as e:  # noqa: BLE001 - any failure is this client's failure
        check("the run finished", False, repr(e))
    sys.exit(1 if failures else 0)
