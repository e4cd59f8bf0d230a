#!/usr/bin/env python3
"""Interop check: the official Python MCP SDK (PyPI `mcp`) as a stdio client of our server.

    python tests/interop/python_client.py target/release/mcp serve

Spawns the command given on argv, speaks MCP to it over stdio through the SDK's
`ClientSession` + `stdio_client`, and checks the conformance reference set (tools, resources,
prompts). Prints one `PASS ...` line per check; on the first failed check prints
`FAIL <check>: <what was expected, what came back>` and exits 1. Every request is bounded by
a timeout, and so is the whole run. The last line is `python-sdk: N passed, N failed`.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Iterator

import anyio
from pydantic import AnyUrl

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.context import RequestContext
from mcp.shared.exceptions import McpError

TOTAL_TIMEOUT = 60.0  # the whole run, server start-up included
STEP_TIMEOUT = 15.0  # one check (one or a few requests)
REQUEST_TIMEOUT = timedelta(seconds=10)  # the SDK's own read timeout for each request

SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT = "This is the content of the static text resource."
SAMPLING_REPLY = "This is a test response from the client"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

EXPECTED_TOOLS = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "json_schema_2020_12_tool",
    "echo",
]
EXPECTED_RESOURCES = ["test://static-text", "test://static-binary", "test://watched-resource"]
EXPECTED_TEMPLATE = "test://template/{id}/data"
EXPECTED_PROMPTS = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
]
LEGACY_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


class CheckFailed(Exception):
    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"{check}: {detail}")
        self.check = check
        self.detail = detail


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.last = "(none)"  # the last check that passed, to place unexpected errors

    def ok(self, check: str, cond: bool, detail: str = "") -> None:
        if not cond:
            raise CheckFailed(check, detail or "assertion failed")
        self.passed += 1
        self.last = check
        print(f"PASS {check}", flush=True)

    @contextmanager
    def step(self, check: str, timeout: float = STEP_TIMEOUT) -> Iterator[None]:
        """Run one check's requests; a timeout or a JSON-RPC error fails that check."""
        try:
            with anyio.fail_after(timeout):
                yield
        except TimeoutError:
            raise CheckFailed(check, f"no answer within {timeout:g}s") from None
        except McpError as e:
            raise CheckFailed(
                check, f"JSON-RPC error {e.error.code}: {e.error.message} (data={e.error.data!r})"
            ) from None
        except CheckFailed:
            raise
        except Exception as e:  # e.g. a result the SDK could not validate
            raise CheckFailed(check, f"{type(e).__name__}: {_describe(e)}") from None


def short(value: Any, limit: int = 400) -> str:
    """A compact JSON rendering of an SDK model (or anything) for failure messages."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def texts(content: list[Any]) -> list[str]:
    return [c.text for c in content if getattr(c, "type", None) == "text"]


def contents_text(contents: list[Any]) -> str:
    return "".join(getattr(c, "text", "") or "" for c in contents)


class Recorder:
    """What the server sent us on its own: log messages, sampling and elicitation requests."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.sampling: list[types.CreateMessageRequestParams] = []
        self.elicitation: list[types.ElicitRequestParams] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_sampling(
        self, context: RequestContext[ClientSession, Any], params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=SAMPLING_REPLY),
            model="test-model",
            stopReason="endTurn",
        )

    async def on_elicitation(
        self, context: RequestContext[ClientSession, Any], params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.elicitation.append(params)
        return types.ElicitResult(
            action="accept", content={"username": "testuser", "email": "test@example.com"}
        )


async def run_checks(session: ClientSession, rec: Recorder, c: Checks) -> None:
    # --- lifecycle ---------------------------------------------------------------------
    with c.step("initialize"):
        init = await session.initialize()
    c.ok(
        f"initialize (protocolVersion {init.protocolVersion}, server {init.serverInfo.name} "
        f"{init.serverInfo.version})",
        str(init.protocolVersion) in LEGACY_VERSIONS,
        f"expected a protocolVersion among {sorted(LEGACY_VERSIONS)}, got {init.protocolVersion!r}",
    )
    caps = init.capabilities
    c.ok(
        "initialize: capabilities tools, resources, prompts, logging",
        all(x is not None for x in (caps.tools, caps.resources, caps.prompts, caps.logging)),
        f"got capabilities {short(caps)}",
    )
    with c.step("ping"):
        await session.send_ping()
    c.ok("ping", True)

    # --- tools -------------------------------------------------------------------------
    with c.step("tools/list"):
        tools = (await session.list_tools()).tools
    names = [t.name for t in tools]
    missing = [n for n in EXPECTED_TOOLS if n not in names]
    c.ok("tools/list has the reference tools", not missing, f"missing {missing}; got {names}")
    bad = [t.name for t in tools if not t.description or not isinstance(t.inputSchema, dict)]
    c.ok("tools/list: every tool has a description and an inputSchema", not bad, f"lacking: {bad}")
    schema = next(t.inputSchema for t in tools if t.name == "json_schema_2020_12_tool")
    c.ok(
        "tools/list: json_schema_2020_12_tool inputSchema kept verbatim",
        schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema"
        and "address" in schema.get("$defs", {})
        and schema.get("additionalProperties") is False,
        f"got {short(schema)}",
    )

    adder = next((t for t in tools if t.name == "add"), None)
    add_schema = adder.inputSchema if adder else {}
    c.ok(
        "tools/list: add's inputSchema is generated from its Rust types (#[tool])",
        add_schema.get("required") == ["a", "b"]
        and add_schema.get("additionalProperties") is False
        and all(add_schema.get("properties", {}).get(k, {}).get("type") == "number" for k in ("a", "b")),
        f"got {short(add_schema)}",
    )
    out_schema = (adder.outputSchema if adder else None) or {}
    c.ok(
        "tools/list: add's outputSchema is generated from its result type (Json<Sum>)",
        out_schema.get("required") == ["sum"] and out_schema.get("properties", {}).get("sum", {}).get("type") == "number",
        f"got {short(out_schema)}",
    )
    with c.step("tools/call add"):
        r = await session.call_tool("add", {"a": 2, "b": 3}, read_timeout_seconds=REQUEST_TIMEOUT)
    c.ok(
        "tools/call add returns the sum as structuredContent",
        not r.isError and r.structuredContent == {"sum": 5},
        f"got {short(r)}",
    )
    # Invalid arguments are refused before the handler runs: a tool execution error from
    # 2025-11-25 on, JSON-RPC -32602 before.
    with c.step("tools/call add with invalid arguments"):
        try:
            r = await session.call_tool("add", {"a": "one", "c": 1}, read_timeout_seconds=REQUEST_TIMEOUT)
            refusal, code = " ".join(texts(r.content)), None
            refused = bool(r.isError)
        except McpError as e:
            refusal, code = e.error.message, e.error.code
            refused = True
    as_result = str(init.protocolVersion) >= "2025-11-25"
    c.ok(
        f"tools/call add with invalid arguments is refused, naming each fault ({init.protocolVersion}: "
        f"{'isError' if as_result else '-32602'})",
        refused
        and (code is None) == as_result
        and (code in (None, -32602))
        and "`a`" in refusal
        and "\"b\" is a required property" in refusal
        and "'c' was unexpected" in refusal,
        f"got code {code}, message {refusal!r}",
    )

    with c.step("tools/call test_simple_text"):
        r = await session.call_tool("test_simple_text", read_timeout_seconds=REQUEST_TIMEOUT)
    c.ok(
        "tools/call test_simple_text returns the exact text",
        not r.isError and texts(r.content) == [SIMPLE_TEXT],
        f"expected one text item {SIMPLE_TEXT!r}, got {short(r)}",
    )

    with c.step("tools/call test_image_content"):
        r = await session.call_tool("test_image_content", {}, read_timeout_seconds=REQUEST_TIMEOUT)
    img = [x for x in r.content if x.type == "image"]
    c.ok(
        "tools/call test_image_content returns a PNG image",
        bool(img) and img[0].mimeType == "image/png" and base64.b64decode(img[0].data).startswith(PNG_MAGIC),
        f"got {short(r)}",
    )

    with c.step("tools/call test_audio_content"):
        r = await session.call_tool("test_audio_content", {}, read_timeout_seconds=REQUEST_TIMEOUT)
    audio = [x for x in r.content if x.type == "audio"]
    c.ok(
        "tools/call test_audio_content returns audio/wav",
        bool(audio) and audio[0].mimeType == "audio/wav" and bool(audio[0].data),
        f"got {short(r)}",
    )

    with c.step("tools/call test_embedded_resource"):
        r = await session.call_tool("test_embedded_resource", {}, read_timeout_seconds=REQUEST_TIMEOUT)
    emb = [x for x in r.content if x.type == "resource"]
    c.ok(
        "tools/call test_embedded_resource returns an embedded resource",
        bool(emb) and str(emb[0].resource.uri) == "test://embedded-resource" and bool(emb[0].resource.mimeType),
        f"got {short(r)}",
    )

    with c.step("tools/call test_multiple_content_types"):
        r = await session.call_tool("test_multiple_content_types", {}, read_timeout_seconds=REQUEST_TIMEOUT)
    kinds = [x.type for x in r.content]
    c.ok(
        "tools/call test_multiple_content_types returns text, image and resource",
        {"text", "image", "resource"} <= set(kinds),
        f"got content types {kinds}",
    )

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with c.step("tools/call test_tool_with_progress"):
        r = await session.call_tool(
            "test_tool_with_progress",
            {},
            read_timeout_seconds=REQUEST_TIMEOUT,
            progress_callback=on_progress,
        )
    values = [p[0] for p in progress]
    c.ok(
        "tools/call test_tool_with_progress: 3 progress notifications, increasing",
        not r.isError
        and len(values) == 3
        and all(a < b for a, b in zip(values, values[1:]))
        and all(p[1] == 100 for p in progress),
        f"expected progress 0, 50, 100 of total 100; got {progress} (result {short(r)})",
    )

    with c.step("logging/setLevel debug"):
        await session.set_logging_level("debug")
    c.ok("logging/setLevel debug", True)
    rec.logs.clear()
    with c.step("tools/call test_tool_with_logging"):
        r = await session.call_tool("test_tool_with_logging", {}, read_timeout_seconds=REQUEST_TIMEOUT)
        # The notifications precede the response on the wire; give stragglers a moment anyway.
        with anyio.move_on_after(1.0):
            while len(rec.logs) < 3:
                await anyio.sleep(0.05)
    c.ok(
        "tools/call test_tool_with_logging: >= 3 notifications/message at level info",
        not r.isError and len(rec.logs) >= 3 and sum(m.level == "info" for m in rec.logs) >= 3,
        f"got {len(rec.logs)} log messages {[(m.level, m.data) for m in rec.logs]} (result {short(r)})",
    )

    with c.step("tools/call test_error_handling"):
        r = await session.call_tool("test_error_handling", {}, read_timeout_seconds=REQUEST_TIMEOUT)
    c.ok(
        "tools/call test_error_handling returns isError: true",
        r.isError is True and bool(texts(r.content)),
        f"expected a result with isError true and a text item, got {short(r)}",
    )

    with c.step("tools/call test_sampling"):
        r = await session.call_tool(
            "test_sampling", {"prompt": "What is 2+2?"}, read_timeout_seconds=REQUEST_TIMEOUT
        )
    got_prompt = None
    if rec.sampling and rec.sampling[0].messages:
        content = rec.sampling[0].messages[0].content
        first = content[0] if isinstance(content, list) and content else content
        got_prompt = getattr(first, "text", None)
    c.ok(
        "tools/call test_sampling: sampling/createMessage round trip",
        len(rec.sampling) == 1
        and got_prompt == "What is 2+2?"
        and not r.isError
        and any(SAMPLING_REPLY in t for t in texts(r.content)),
        f"sampling requests {[short(p) for p in rec.sampling]}; result {short(r)}",
    )

    with c.step("tools/call test_elicitation"):
        r = await session.call_tool(
            "test_elicitation", {"message": "Who are you?"}, read_timeout_seconds=REQUEST_TIMEOUT
        )
    joined = " ".join(texts(r.content))
    c.ok(
        "tools/call test_elicitation: elicitation/create round trip",
        len(rec.elicitation) == 1
        and rec.elicitation[0].message == "Who are you?"
        and not r.isError
        and "accept" in joined
        and "testuser" in joined,
        f"elicitation requests {[short(p) for p in rec.elicitation]}; result {short(r)}",
    )

    echo_text = 'interop ✓ "quoted" \\ back\nslash, newline and emoji 🦀'
    with c.step("tools/call echo"):
        r = await session.call_tool("echo", {"text": echo_text}, read_timeout_seconds=REQUEST_TIMEOUT)
    c.ok(
        "tools/call echo returns its argument",
        not r.isError and texts(r.content) == [echo_text],
        f"expected one text item {echo_text!r}, got {short(r)}",
    )

    # --- resources ---------------------------------------------------------------------
    with c.step("resources/list"):
        resources = (await session.list_resources()).resources
    uris = [str(x.uri) for x in resources]
    missing = [u for u in EXPECTED_RESOURCES if u not in uris]
    c.ok("resources/list has the reference resources", not missing, f"missing {missing}; got {uris}")

    with c.step("resources/templates/list"):
        templates = (await session.list_resource_templates()).resourceTemplates
    tmpl = [t.uriTemplate for t in templates]
    c.ok(
        "resources/templates/list has test://template/{id}/data",
        EXPECTED_TEMPLATE in tmpl,
        f"got {tmpl}",
    )

    with c.step("resources/read test://static-text"):
        rr = await session.read_resource(AnyUrl("test://static-text"))
    c.ok(
        "resources/read test://static-text returns the exact text",
        len(rr.contents) == 1
        and contents_text(rr.contents) == STATIC_TEXT
        and rr.contents[0].mimeType == "text/plain",
        f"expected text {STATIC_TEXT!r} (text/plain), got {short(rr)}",
    )

    with c.step("resources/read test://static-binary"):
        rr = await session.read_resource(AnyUrl("test://static-binary"))
    blob = getattr(rr.contents[0], "blob", None) if rr.contents else None
    c.ok(
        "resources/read test://static-binary returns a PNG blob",
        blob is not None and base64.b64decode(blob).startswith(PNG_MAGIC),
        f"got {short(rr)}",
    )

    with c.step("resources/read test://template/42/data"):
        rr = await session.read_resource(AnyUrl("test://template/42/data"))
    c.ok(
        "resources/read test://template/42/data contains 42",
        bool(rr.contents)
        and str(rr.contents[0].uri) == "test://template/42/data"
        and "42" in contents_text(rr.contents),
        f"got {short(rr)}",
    )

    with c.step("resources/subscribe + unsubscribe test://watched-resource"):
        await session.subscribe_resource(AnyUrl("test://watched-resource"))
        await session.unsubscribe_resource(AnyUrl("test://watched-resource"))
    c.ok("resources/subscribe + unsubscribe test://watched-resource", True)

    # --- prompts -----------------------------------------------------------------------
    with c.step("prompts/list"):
        prompts = (await session.list_prompts()).prompts
    pnames = [p.name for p in prompts]
    missing = [n for n in EXPECTED_PROMPTS if n not in pnames]
    c.ok("prompts/list has the reference prompts", not missing, f"missing {missing}; got {pnames}")
    args = {p.name: sorted(a.name for a in (p.arguments or [])) for p in prompts}
    c.ok(
        "prompts/list: test_prompt_with_arguments takes arg1 and arg2",
        args.get("test_prompt_with_arguments") == ["arg1", "arg2"],
        f"got arguments {args.get('test_prompt_with_arguments')}",
    )

    with c.step("prompts/get test_simple_prompt"):
        g = await session.get_prompt("test_simple_prompt")
    c.ok(
        "prompts/get test_simple_prompt",
        len(g.messages) >= 1 and g.messages[0].role == "user" and g.messages[0].content.type == "text",
        f"got {short(g)}",
    )

    with c.step("prompts/get test_prompt_with_arguments"):
        g = await session.get_prompt(
            "test_prompt_with_arguments", {"arg1": "interopValue1", "arg2": "interopValue2"}
        )
    ptext = " ".join(m.content.text for m in g.messages if m.content.type == "text")
    c.ok(
        "prompts/get test_prompt_with_arguments contains arg1 and arg2",
        "interopValue1" in ptext and "interopValue2" in ptext,
        f"expected both 'interopValue1' and 'interopValue2' in the message text, got {short(g)}",
    )

    with c.step("prompts/get test_prompt_with_embedded_resource"):
        g = await session.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
    emb = [m.content for m in g.messages if m.content.type == "resource"]
    c.ok(
        "prompts/get test_prompt_with_embedded_resource embeds the resource",
        bool(emb) and str(emb[0].resource.uri) == "test://example-resource",
        f"got {short(g)}",
    )

    with c.step("prompts/get test_prompt_with_image"):
        g = await session.get_prompt("test_prompt_with_image")
    c.ok(
        "prompts/get test_prompt_with_image has an image",
        any(m.content.type == "image" and m.content.mimeType == "image/png" for m in g.messages),
        f"got {short(g)}",
    )

    with c.step("completion/complete"):
        comp = await session.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "test"},
        )
    c.ok("completion/complete returns a values array", isinstance(comp.completion.values, list))


async def main(argv: list[str]) -> int:
    if not argv:
        print(f"usage: {sys.argv[0]} SERVER_COMMAND [ARGS...]", file=sys.stderr)
        return 2
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    rec = Recorder()
    checks = Checks()
    failure: CheckFailed | None = None
    print(f"python-sdk: mcp {_sdk_version()} against: {' '.join(argv)}", flush=True)
    try:
        with anyio.fail_after(TOTAL_TIMEOUT):
            async with stdio_client(params) as (read, write):
                async with ClientSession(
                    read,
                    write,
                    read_timeout_seconds=REQUEST_TIMEOUT,
                    logging_callback=rec.on_log,
                    sampling_callback=rec.on_sampling,
                    elicitation_callback=rec.on_elicitation,
                ) as session:
                    try:
                        await run_checks(session, rec, checks)
                    except CheckFailed as e:
                        failure = e
                    except Exception as e:  # noqa: BLE001 - e.g. a result shaped unlike the spec
                        failure = CheckFailed(
                            f"the check after {checks.last!r}", f"{type(e).__name__}: {_describe(e)}"
                        )
    except TimeoutError:
        failure = CheckFailed("run", f"the whole run exceeded {TOTAL_TIMEOUT:g}s")
    except Exception as e:  # noqa: BLE001 - report anything the SDK or the spawn raised
        if failure is None:
            failure = CheckFailed("run", f"{type(e).__name__}: {_describe(e)}")
    if failure is not None:
        print(f"FAIL {failure.check}: {failure.detail}", flush=True)
        print(f"python-sdk: {checks.passed} passed, 1 failed", flush=True)
        return 1
    print(f"python-sdk: {checks.passed} passed, 0 failed", flush=True)
    return 0


def _describe(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(f"{type(x).__name__}: {_describe(x)}" for x in e.exceptions)
    return str(e) or repr(e)


def _sdk_version() -> str:
    from importlib.metadata import version

    return version("mcp")


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
