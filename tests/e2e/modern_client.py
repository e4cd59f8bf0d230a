"""A 2026-07-28 client (the official Python SDK, 2.x) through `mcp proxy` to a legacy-only server.

    python modern_client.py URL

URL is `mcp proxy "npx -y @modelcontextprotocol/server-everything@..." --http ADDR`'s /mcp
endpoint. server-everything speaks only the handshake era (2025-11-25 and older); the proxy
serves it again to clients of either era, so this client must end up speaking 2026-07-28
(no `initialize` on the wire, every request stamped with the modern version) and still reach
every feature used below. That includes the upstream server's own questions: its
`trigger-elicitation-request` and `trigger-sampling-request` tools send `elicitation/create` and
`sampling/createMessage` to the proxy, which puts them to this client as `input_required` rounds
(the SDK's elicitation and sampling callbacks answer them; the call is retried with the answers).
Exits 0 when every check passes, 1 otherwise (each check is printed).
"""

from __future__ import annotations

import json
import sys

from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp import types
from mcp.client.streamable_http import streamable_http_client

MODERN = "2026-07-28"
DEADLINE = 90  # seconds for the whole run
SAMPLING_REPLY = "a reply from the e2e client's model"
ELICITED = {"name": "Ada Lovelace", "check": True, "email": "ada@example.com"}

failures: list[str] = []


def check(name: str, ok: bool, detail: object = "") -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail}"), flush=True)
    if not ok:
        failures.append(name)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main(url: str) -> None:
    # Every request this client sends, as seen on the wire: (protocol-version header, JSON body).
    sent: list[tuple[str | None, object]] = []

    async def record(request: httpx2.Request) -> None:
        if request.method == "POST":
            try:
                body = json.loads(request.content)
            except ValueError:
                body = None
            sent.append((request.headers.get("mcp-protocol-version"), body))

    # The upstream server's questions, as they reached this client's callbacks.
    asked: dict[str, list[Any]] = {"sampling": [], "elicitation": []}

    async def on_sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked["sampling"].append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLING_REPLY),
            model="e2e-model",
            stop_reason="endTurn",
        )

    async def on_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked["elicitation"].append(params)
        return types.ElicitResult(action="accept", content=ELICITED)

    http = httpx2.AsyncClient(
        timeout=httpx2.Timeout(30, read=60), event_hooks={"request": [record], "response": []}
    )
    async with http, Client(
        streamable_http_client(url, http_client=http),
        sampling_callback=on_sampling,
        elicitation_callback=on_elicitation,
    ) as client:
        check("negotiated 2026-07-28", client.protocol_version == MODERN, client.protocol_version)
        check("connected by server/discover", client.session.discover_result is not None)
        check("no initialize handshake", client.session.initialize_result is None)
        info = client.server_info
        check("server identifies itself through the proxy", info is not None and info.name != "", info)

        tools = {t.name: t for t in (await client.list_tools()).tools}
        for name in (
            "echo",
            "get-sum",
            "trigger-long-running-operation",
            "trigger-elicitation-request",
            "trigger-sampling-request",
        ):
            check(f"tools/list has {name}", name in tools, sorted(tools))

        r = await client.call_tool("echo", {"message": "through the bridge"})
        check("tools/call echo", not r.is_error and text_of(r) == "Echo: through the bridge", r)

        r = await client.call_tool("get-sum", {"a": 2, "b": 3.5})
        check("tools/call get-sum", not r.is_error and "5.5" in text_of(r), r)

        progress: list[tuple[float, float | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total))

        r = await client.call_tool(
            "trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=on_progress
        )
        check("tools/call trigger-long-running-operation", "Long running operation completed" in text_of(r), r)
        check("progress notifications reach the modern client", progress == [(1, 2), (2, 2)], progress)

        # The upstream server asks for input during the call: an input_required round for us.
        r = await client.call_tool("trigger-elicitation-request", {})
        text = text_of(r)
        check("elicitation: the callback was asked once", len(asked["elicitation"]) == 1, asked["elicitation"])
        question = asked["elicitation"][0] if asked["elicitation"] else None
        check(
            "elicitation: the upstream server's form reached the callback",
            question is not None
            and question.message == "Please provide inputs for the following fields:"
            and "name" in (question.requested_schema or {}).get("properties", {}),
            question,
        )
        check(
            "elicitation: the answer reached the upstream tool",
            not r.is_error
            and "User provided the requested information" in text
            and "- Name: Ada Lovelace" in text
            and "- Email: ada@example.com" in text
            and '"action": "accept"' in text,
            r,
        )

        r = await client.call_tool("trigger-sampling-request", {"prompt": "What is 2+2?", "maxTokens": 20})
        text = text_of(r)
        check("sampling: the callback was asked once", len(asked["sampling"]) == 1, asked["sampling"])
        question = asked["sampling"][0] if asked["sampling"] else None
        first = question.messages[0].content if question is not None and question.messages else None
        check(
            "sampling: the upstream server's request reached the callback",
            question is not None
            and question.max_tokens == 20
            and getattr(first, "text", "").endswith("What is 2+2?"),
            question,
        )
        check(
            "sampling: the reply reached the upstream tool",
            not r.is_error and "LLM sampling result" in text and SAMPLING_REPLY in text,
            r,
        )

        r = await client.read_resource("demo://resource/static/document/features.md")
        first = r.contents[0] if r.contents else None
        check(
            "resources/read",
            first is not None and str(first.uri) == "demo://resource/static/document/features.md"
            and getattr(first, "text", "").startswith("# "),
            r,
        )

        r = await client.get_prompt("args-prompt", {"city": "Paris"})
        check(
            "prompts/get",
            len(r.messages) >= 1 and r.messages[0].role == "user" and "Paris" in r.messages[0].content.text,
            r,
        )

    methods = [b.get("method") for _, b in sent if isinstance(b, dict)]
    check("requests were sent", len(methods) >= 6, methods)
    check("no initialize on the wire", "initialize" not in methods, methods)
    check("server/discover on the wire", "server/discover" in methods, methods)
    stamped = [
        (v, b.get("method"))
        for v, b in sent
        if isinstance(b, dict)
        and b.get("method")
        and (v != MODERN or (b.get("params") or {}).get("_meta", {}).get("io.modelcontextprotocol/protocolVersion") != MODERN)
    ]
    check("every request carries 2026-07-28 (header and _meta)", not stamped, stamped)
    # The answers went back as retries of the calls (input_required rounds), not as responses
    # to requests of the server.
    retried = [
        (b.get("params") or {}).get("name")
        for _, b in sent
        if isinstance(b, dict) and b.get("method") == "tools/call" and (b.get("params") or {}).get("inputResponses")
    ]
    check(
        "the answers were sent as input_required retries of the calls",
        "trigger-elicitation-request" in retried and "trigger-sampling-request" in retried,
        retried,
    )
    answers = [b for _, b in sent if isinstance(b, dict) and "method" not in b]
    check("no responses to server requests on the wire", not answers, answers)


async def bounded(url: str) -> None:
    with anyio.fail_after(DEADLINE):
        await main(url)


if __name__ == "__main__":
    url = sys.argv[1]
    print(f"modern client (python SDK) -> {url}", flush=True)
    try:
        anyio.run(bounded, url)
    except Exception as e:  # noqa: BLE001 - any failure is this client's failure
        check("the run finished", False, repr(e))
    sys.exit(1 if failures else 0)
