"""A 2026-07-28 client (the official Python SDK, 2.x) through `mcp proxy --config FILE` (the gateway).

    python gateway_client.py URL FILES_DIR

URL is the gateway's /mcp endpoint. Its config file names three servers, each served under its
name as prefix: `everything` (@modelcontextprotocol/server-everything, legacy era only),
`files` (@modelcontextprotocol/server-filesystem, rooted at FILES_DIR) and `ref` (`mcp serve`).
Checks that every server's tools are listed under its prefix (and nothing else), that each
server's tools are callable through the gateway, that progress and the upstream server's
elicitation pass through (as input_required rounds for this modern client), and that resources
and prompts are reached under their prefixed URIs and names.
Exits 0 when every check passes, 1 otherwise (each check is printed).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp import Client
from mcp import types
from mcp.client.streamable_http import streamable_http_client

MODERN = "2026-07-28"
DEADLINE = 90  # seconds for the whole run
PREFIXES = ("everything_", "files_", "ref_")
ELICITED = {"name": "Ada Lovelace", "check": True, "email": "ada@example.com"}

failures: list[str] = []


def check(name: str, ok: bool, detail: object = "") -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {name}" + ("" if ok else f": {detail}"), flush=True)
    if not ok:
        failures.append(name)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main(url: str, files: str) -> None:
    asked: list[Any] = []

    async def on_elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content=ELICITED)

    async with Client(streamable_http_client(url), elicitation_callback=on_elicitation) as client:
        check("negotiated 2026-07-28", client.protocol_version == MODERN, client.protocol_version)

        tools = {t.name: t for t in (await client.list_tools()).tools}
        unprefixed = [n for n in tools if not n.startswith(PREFIXES)]
        check("every tool is under a server's prefix", not unprefixed, unprefixed)
        for name in (
            "everything_echo",
            "everything_get-sum",
            "everything_trigger-long-running-operation",
            "everything_trigger-elicitation-request",
            "files_read_text_file",
            "files_write_file",
            "files_list_allowed_directories",
            "ref_echo",
            "ref_add",
            "ref_test_tool_with_progress",
        ):
            check(f"tools/list has {name}", name in tools, sorted(tools))
        schema = tools.get("files_write_file")
        check(
            "a prefixed tool keeps its schema",
            schema is not None and {"path", "content"} <= set(schema.input_schema.get("properties", {})),
            schema,
        )

        r = await client.call_tool("everything_echo", {"message": "through the gateway"})
        check("everything_echo", not r.is_error and text_of(r) == "Echo: through the gateway", r)
        r = await client.call_tool("everything_get-sum", {"a": 2, "b": 3.5})
        check("everything_get-sum", not r.is_error and "5.5" in text_of(r), r)

        path = os.path.join(files, "from-python.txt")
        r = await client.call_tool("files_write_file", {"path": path, "content": "written through the gateway"})
        check("files_write_file", not r.is_error, r)
        r = await client.call_tool("files_read_text_file", {"path": path})
        check("files_read_text_file", not r.is_error and text_of(r) == "written through the gateway", r)
        r = await client.call_tool("files_list_allowed_directories", {})
        check("files_list_allowed_directories", not r.is_error and os.path.realpath(files) in text_of(r), r)

        r = await client.call_tool("ref_echo", {"text": "to our own server"})
        check("ref_echo", not r.is_error and text_of(r) == "to our own server", r)
        r = await client.call_tool("ref_add", {"a": 1, "b": 2})
        check("ref_add", not r.is_error and (r.structured_content or {}).get("sum") == 3, r)

        progress: list[tuple[float, float | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total))

        r = await client.call_tool(
            "everything_trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=on_progress
        )
        check("a long operation of everything", "Long running operation completed" in text_of(r), r)
        check("its progress reaches the client", progress == [(1, 2), (2, 2)], progress)
        ref_progress: list[tuple[float, float | None]] = []

        async def on_ref_progress(p: float, total: float | None, message: str | None) -> None:
            ref_progress.append((p, total))

        r = await client.call_tool("ref_test_tool_with_progress", {}, progress_callback=on_ref_progress)
        check("ref's progress reaches the client", [p for p, _ in ref_progress] == [0, 50, 100], ref_progress)

        r = await client.call_tool("everything_trigger-elicitation-request", {})
        check("elicitation: the callback was asked once", len(asked) == 1, asked)
        check(
            "elicitation: the answer reached the upstream tool",
            not r.is_error and "- Name: Ada Lovelace" in text_of(r),
            r,
        )

        uri = "demo://everything/resource/static/document/features.md"
        r = await client.read_resource(uri)
        first = r.contents[0] if r.contents else None
        check(
            "resources/read under the prefixed URI",
            first is not None and getattr(first, "text", "").startswith("# "),
            r,
        )
        r = await client.read_resource("test://ref/template/5/data")
        check("a template of ref", r.contents and "Data for ID: 5" in getattr(r.contents[0], "text", ""), r)

        r = await client.get_prompt("everything_args-prompt", {"city": "Paris"})
        check("prompts/get under the prefix", len(r.messages) >= 1 and "Paris" in r.messages[0].content.text, r)


async def bounded(url: str, files: str) -> None:
    with anyio.fail_after(DEADLINE):
        await main(url, files)


if __name__ == "__main__":
    url, files = sys.argv[1], sys.argv[2]
    print(f"gateway client (python SDK, modern) -> {url}", flush=True)
    try:
        anyio.run(bounded, url, files)
    except Exception as e:  # noqa: BLE001 - any failure is this client's failure
        check("the run finished", False, repr(e))
    sys.exit(1 if failures else 0)
