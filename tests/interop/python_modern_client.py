#!/usr/bin/env python3
"""Interop check: the official Python MCP SDK 2.x (PyPI `mcp`, revision 2026-07-28) as a client
of our server, in the modern (stateless) era.

    python tests/interop/python_modern_client.py http://127.0.0.1:PORT/mcp   # Streamable HTTP
    python tests/interop/python_modern_client.py target/release/mcp serve    # stdio

Connects through the SDK's `Client` in its default `mode="auto"` (it probes `server/discover`
and falls back to `initialize` only for a legacy server), asserts that the era negotiated is
2026-07-28, then checks the reference server: lists (walking every page), tools (text,
structured output, tool errors, `x-mcp-header`), progress, per-request log levels,
`input_required` rounds answered from the SDK's elicitation / sampling / roots callbacks
(tools and a prompt), resources, prompts, completion, `subscriptions/listen` and the modern
errors (-32602, -32021, -32022). Prints one `PASS ...` line per check; on the first failed
check prints `FAIL <check>: <expected vs got>` and exits 1. Checks listed in KNOWN_FAILS are
skipped with a `KNOWN-FAIL:` line. Every request is bounded by a timeout, and so is the whole
run. The last line is `python-modern: N passed, N failed`.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.subscriptions import PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPError

# Deprecated-but-functional features (sampling, roots, logging) are exercised on purpose.
warnings.simplefilter("ignore")

MODERN = "2026-07-28"
TOTAL_TIMEOUT = 90.0  # the whole run, server start-up included
STEP_TIMEOUT = 15.0  # one check (one or a few requests)
REQUEST_TIMEOUT = 10.0  # the SDK's own read timeout for each request

SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT = "This is the content of the static text resource."
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ROOT_URI = "file:///tmp/interop-root"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

# What the "user" answers, by form field name.
ANSWERS: dict[str, Any] = {
    "name": "Interop Py",
    "color": "teal",
    "ok": True,
    "context": "interop-context",
    "username": "testuser",
    "email": "test@example.com",
}

EXPECTED_TOOLS = [
    "echo",
    "add",
    "test_simple_text",
    "test_image_content",
    "test_error_handling",
    "test_tool_with_progress",
    "test_logging_tool",
    "test_header_echo",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_missing_capability",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "json_schema_2020_12_tool",
]
EXPECTED_RESOURCES = ["test://static-text", "test://static-binary", "test://watched-resource"]
EXPECTED_TEMPLATE = "test://template/{id}/data"
EXPECTED_PROMPTS = [
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
]

# Checks skipped with a printed `KNOWN-FAIL:` line: {check name: why}. Only for a bug of ours
# that is reported and waiting for a fix in the library.
KNOWN_FAILS: dict[str, str] = {}


class CheckFailed(Exception):
    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"{check}: {detail}")
        self.check = check
        self.detail = detail


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.known = 0
        self.last = "(none)"

    def ok(self, check: str, cond: bool, detail: str = "") -> None:
        if check in KNOWN_FAILS:  # not asserted: reported, waiting for a fix in the library
            self.known += 1
            print(f"KNOWN-FAIL: {check} ({KNOWN_FAILS[check]})", flush=True)
            return
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
        except MCPError as e:
            raise CheckFailed(check, f"JSON-RPC error {e.code}: {e.message} (data={e.data!r})") from None
        except CheckFailed:
            raise
        except Exception as e:  # e.g. a result the SDK could not validate
            raise CheckFailed(check, f"{type(e).__name__}: {_describe(e)}") from None


def short(value: Any, limit: int = 500) -> str:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "..."


def texts(content: list[Any]) -> list[str]:
    return [c.text for c in content if getattr(c, "type", None) == "text"]


def joined(result: Any) -> str:
    return " ".join(texts(result.content))


class Recorder:
    """What the server asked of us through `input_required` rounds, and what it logged."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.elicitation: list[types.ElicitRequestParams] = []
        self.sampling: list[types.CreateMessageRequestParams] = []
        self.roots = 0

    def clear(self) -> None:
        self.logs.clear()
        self.elicitation.clear()
        self.sampling.clear()
        self.roots = 0

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.elicitation.append(params)
        schema = getattr(params, "requested_schema", None) or {}
        fields = (schema.get("properties") or {}) if isinstance(schema, dict) else {}
        return types.ElicitResult(action="accept", content={k: ANSWERS[k] for k in fields if k in ANSWERS})

    async def on_sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.sampling.append(params)
        question = sampled_question(params)
        reply = "Paris" if "capital of France" in question else f"Model reply to: {question}"
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=reply), model="interop-model"
        )

    async def on_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.roots += 1
        return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name="interop")])


def sampled_question(params: types.CreateMessageRequestParams) -> str:
    if not params.messages:
        return ""
    content = params.messages[0].content
    first = content[0] if isinstance(content, list) and content else content
    return getattr(first, "text", "") or ""


async def list_all(fetch: Any, field: str) -> tuple[list[Any], int]:
    """Every item of a paginated list, following `next_cursor`; also the number of pages."""
    items: list[Any] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await fetch(cursor=cursor)
        pages += 1
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if cursor is None or pages >= 50:
            return items, pages


async def run_checks(client: Client, rec: Recorder, c: Checks, new_client: Any) -> None:
    # --- era -------------------------------------------------------------------------------
    session = client.session
    info = client.server_info
    c.ok(
        f"connect: negotiated {client.protocol_version} (server {info.name if info else '?'})",
        client.protocol_version == MODERN,
        f"expected protocol version {MODERN}, got {client.protocol_version!r}",
    )
    discover = session.discover_result
    c.ok(
        "connect: era modern through server/discover (no initialize)",
        discover is not None and session.initialize_result is None and MODERN in discover.supported_versions,
        f"discover_result={short(discover)}, initialize_result={short(session.initialize_result)}",
    )
    c.ok(
        "server/discover: serverInfo and instructions",
        info is not None and info.name == "mcp-reference-server" and bool(client.instructions),
        f"serverInfo={short(info)}, instructions={client.instructions!r}",
    )
    caps = client.server_capabilities
    c.ok(
        "server/discover: capabilities tools, resources, prompts, completions",
        all(x is not None for x in (caps.tools, caps.resources, caps.prompts, caps.completions)),
        f"got capabilities {short(caps)}",
    )
    with c.step("server/discover at an unknown revision"):
        try:
            await session.send_discover("2099-01-01")
            raised: MCPError | None = None
        except MCPError as e:
            raised = e
    supported = (raised.data or {}).get("supported", []) if raised is not None else []
    c.ok(
        "server/discover at an unknown revision: -32022 naming 2026-07-28",
        raised is not None and raised.code == -32022 and MODERN in supported,
        f"expected error -32022 with data.supported containing {MODERN}, got "
        + (f"{raised.code} {raised.message} {raised.data!r}" if raised else "a result"),
    )

    # --- tools -----------------------------------------------------------------------------
    with c.step("tools/list"):
        tools, pages = await list_all(client.list_tools, "tools")
    names = [t.name for t in tools]
    missing = [n for n in EXPECTED_TOOLS if n not in names]
    c.ok(
        f"tools/list ({len(tools)} tools, {pages} page(s)) has the reference tools",
        not missing and len(set(names)) == len(names),
        f"missing {missing}; duplicates {sorted({n for n in names if names.count(n) > 1})}; got {names}",
    )
    by_name = {t.name: t for t in tools}
    add = by_name["add"]
    c.ok(
        "tools/list: add has an outputSchema, a title and annotations",
        isinstance(add.output_schema, dict)
        and "sum" in add.output_schema.get("properties", {})
        and add.title == "Add numbers"
        and add.annotations is not None
        and add.annotations.read_only_hint is True,
        f"got {short(add)}",
    )
    schema = by_name["json_schema_2020_12_tool"].input_schema
    c.ok(
        "tools/list: json_schema_2020_12_tool inputSchema kept verbatim",
        schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema"
        and "address" in schema.get("$defs", {})
        and schema.get("additionalProperties") is False,
        f"got {short(schema)}",
    )

    add_schema = add.input_schema
    c.ok(
        "tools/list: add's inputSchema is generated from its Rust types (#[tool])",
        add_schema.get("required") == ["a", "b"]
        and add_schema.get("additionalProperties") is False
        and all(add_schema.get("properties", {}).get(k, {}).get("type") == "number" for k in ("a", "b")),
        f"got {short(add_schema)}",
    )
    # 2026-07-28: invalid arguments are a tool execution error naming each fault, sent
    # before the handler runs.
    with c.step("tools/call add with invalid arguments"):
        r = await client.call_tool("add", {"a": "one", "c": 1})
    refusal = " ".join(texts(r.content))
    c.ok(
        "tools/call add with invalid arguments is a tool execution error naming each fault",
        bool(r.is_error)
        and "`a`" in refusal
        and "\"b\" is a required property" in refusal
        and "'c' was unexpected" in refusal,
        f"got {short(r)}",
    )

    echo_text = 'interop ✓ "quoted" \\ back\nslash, newline and emoji 🦀'
    with c.step("tools/call echo"):
        r = await client.call_tool("echo", {"text": echo_text})
    c.ok(
        "tools/call echo returns its argument",
        not r.is_error and texts(r.content) == [echo_text],
        f"expected one text item {echo_text!r}, got {short(r)}",
    )

    with c.step("tools/call add (structured output)"):
        r = await client.call_tool("add", {"a": 1.25, "b": 2})
    c.ok(
        "tools/call add: structuredContent {sum: 3.25} and its JSON as text",
        not r.is_error
        and r.structured_content == {"sum": 3.25}
        and any(json.loads(t) == {"sum": 3.25} for t in texts(r.content)),
        f"got {short(r)}",
    )

    with c.step("tools/call test_simple_text"):
        r = await client.call_tool("test_simple_text", {})
    c.ok("tools/call test_simple_text", texts(r.content) == [SIMPLE_TEXT], f"got {short(r)}")

    with c.step("tools/call test_image_content"):
        r = await client.call_tool("test_image_content", {})
    img = [x for x in r.content if x.type == "image"]
    c.ok(
        "tools/call test_image_content returns a PNG image",
        bool(img) and img[0].mime_type == "image/png" and base64.b64decode(img[0].data).startswith(PNG_MAGIC),
        f"got {short(r)}",
    )

    with c.step("tools/call test_error_handling"):
        r = await client.call_tool("test_error_handling", {})
    c.ok(
        "tools/call test_error_handling returns isError: true",
        r.is_error is True and "intentionally" in joined(r),
        f"expected isError true with the tool's message, got {short(r)}",
    )

    with c.step("tools/call an unknown tool"):
        try:
            r = await client.call_tool("no_such_tool", {})
            raised = None
        except MCPError as e:
            raised = e
    c.ok(
        "tools/call an unknown tool: JSON-RPC error -32602",
        raised is not None and raised.code == -32602,
        f"got {f'error {raised.code} {raised.message}' if raised else short(r)}",
    )

    with c.step("tools/call test_header_echo (x-mcp-header)"):
        r = await client.call_tool("test_header_echo", {"region": "eu-west-1", "note": "n"})
    c.ok(
        "tools/call test_header_echo (Mcp-Param-Region mirrored) returns region=eu-west-1",
        not r.is_error and texts(r.content) == ["region=eu-west-1"],
        f"got {short(r)}",
    )

    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with c.step("tools/call test_tool_with_progress"):
        r = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    values = [p[0] for p in progress]
    c.ok(
        "tools/call test_tool_with_progress: progress 0, 50, 100 of 100",
        not r.is_error and values == [0, 50, 100] and all(p[1] == 100 for p in progress),
        f"got progress {progress} (result {short(r)})",
    )

    rec.clear()
    with c.step("tools/call test_tool_with_logging without a log level"):
        r = await client.call_tool("test_tool_with_logging", {})
        await anyio.sleep(0.3)
    c.ok(
        "tools/call test_tool_with_logging without _meta logLevel: no log messages",
        not r.is_error and not rec.logs,
        f"got {[(m.level, m.data) for m in rec.logs]} (result {short(r)})",
    )
    with c.step("tools/call test_tool_with_logging at logLevel info"):
        r = await client.call_tool("test_tool_with_logging", {}, meta={LOG_LEVEL_KEY: "info"})
        with anyio.move_on_after(1.0):
            while len(rec.logs) < 3:
                await anyio.sleep(0.05)
    c.ok(
        "tools/call test_tool_with_logging with _meta logLevel info: 3 notifications/message",
        not r.is_error
        and [m.data for m in rec.logs] == ["Tool execution started", "Tool processing data", "Tool execution completed"]
        and all(m.level == "info" for m in rec.logs),
        f"got {[(m.level, m.data) for m in rec.logs]} (result {short(r)})",
    )
    rec.clear()
    with c.step("tools/call test_logging_tool at logLevel error"):
        r = await client.call_tool("test_logging_tool", {}, meta={LOG_LEVEL_KEY: "error"})
        await anyio.sleep(0.3)
    c.ok(
        "tools/call test_logging_tool at logLevel error: info messages filtered out",
        not r.is_error and "completed" in joined(r) and not rec.logs,
        f"got {[(m.level, m.data) for m in rec.logs]} (result {short(r)})",
    )

    # --- input_required rounds -------------------------------------------------------------
    rec.clear()
    with c.step("input_required: elicitation"):
        r = await client.call_tool("test_input_required_result_elicitation", {})
    c.ok(
        "input_required: elicitation answered from the callback",
        [e.message for e in rec.elicitation] == ["What is your name?"]
        and not r.is_error
        and "action=accept" in joined(r)
        and '"Interop Py"' in joined(r),
        f"elicitations {[short(e) for e in rec.elicitation]}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: sampling"):
        r = await client.call_tool("test_input_required_result_sampling", {})
    c.ok(
        "input_required: sampling answered from the callback",
        len(rec.sampling) == 1
        and "capital of France" in sampled_question(rec.sampling[0])
        and rec.sampling[0].max_tokens == 100
        and texts(r.content) == ["The model answered: Paris"],
        f"sampling {[short(s) for s in rec.sampling]}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: roots"):
        r = await client.call_tool("test_input_required_result_list_roots", {})
    c.ok(
        "input_required: roots/list answered from the callback",
        rec.roots == 1 and texts(r.content) == [f"The client has 1 root(s): {ROOT_URI}"],
        f"roots asked {rec.roots} time(s); result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: sealed requestState"):
        r = await client.call_tool("test_input_required_result_request_state", {})
    c.ok(
        "input_required: requestState carried across the round",
        len(rec.elicitation) == 1 and joined(r).startswith("state-ok: confirmation action=accept"),
        f"elicitations {len(rec.elicitation)}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: three inputs in one round"):
        r = await client.call_tool("test_input_required_result_multiple_inputs", {})
    c.ok(
        "input_required: elicitation + sampling + roots in one round",
        len(rec.elicitation) == 1
        and len(rec.sampling) == 1
        and rec.roots == 1
        and '["client_roots", "greeting", "user_name"]' in joined(r),
        f"asked {len(rec.elicitation)}/{len(rec.sampling)}/{rec.roots}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: two rounds"):
        r = await client.call_tool("test_input_required_result_multi_round", {})
    c.ok(
        "input_required: two rounds, one question each",
        [e.message for e in rec.elicitation] == ["What is your name?", "What is your favourite colour?"]
        and '"Interop Py"' in joined(r)
        and '"teal"' in joined(r),
        f"elicitations {[e.message for e in rec.elicitation]}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: test_elicitation (the legacy-era tool)"):
        r = await client.call_tool("test_elicitation", {"message": "Who are you?"})
    c.ok(
        "input_required: test_elicitation (ctx.elicit) as an input_required round",
        [e.message for e in rec.elicitation] == ["Who are you?"]
        and "action=accept" in joined(r)
        and "testuser" in joined(r),
        f"elicitations {[short(e) for e in rec.elicitation]}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: test_sampling"):
        r = await client.call_tool("test_sampling", {"prompt": "What is 2+2?"})
    c.ok(
        "input_required: test_sampling (ctx.sample) as an input_required round",
        len(rec.sampling) == 1
        and sampled_question(rec.sampling[0]) == "What is 2+2?"
        and texts(r.content) == ["LLM response: Model reply to: What is 2+2?"],
        f"sampling {[short(s) for s in rec.sampling]}; result {short(r)}",
    )

    rec.clear()
    with c.step("input_required: prompts/get"):
        g = await client.get_prompt("test_input_required_result_prompt")
    gtext = " ".join(m.content.text for m in g.messages if m.content.type == "text")
    c.ok(
        "input_required: prompts/get test_input_required_result_prompt",
        [e.message for e in rec.elicitation] == ["What context should the prompt use?"]
        and gtext == "Use this context: interop-context",
        f"elicitations {[e.message for e in rec.elicitation]}; prompt {short(g)}",
    )

    with c.step("missing client capability"):
        async with new_client() as bare:  # no sampling callback: no sampling capability declared
            try:
                r = await bare.call_tool("test_missing_capability", {})
                raised = None
            except MCPError as e:
                raised = e
    required = (raised.data or {}).get("requiredCapabilities", {}) if raised is not None else {}
    c.ok(
        "tools/call needing sampling from a client without it: -32021",
        raised is not None and raised.code == -32021 and "sampling" in required,
        f"got {f'error {raised.code} {raised.message} {raised.data!r}' if raised else short(r)}",
    )

    # --- resources -------------------------------------------------------------------------
    with c.step("resources/list"):
        resources, _ = await list_all(client.list_resources, "resources")
    uris = [str(x.uri) for x in resources]
    missing = [u for u in EXPECTED_RESOURCES if u not in uris]
    c.ok("resources/list has the reference resources", not missing, f"missing {missing}; got {uris}")

    with c.step("resources/templates/list"):
        templates, _ = await list_all(client.list_resource_templates, "resource_templates")
    c.ok(
        "resources/templates/list has test://template/{id}/data",
        EXPECTED_TEMPLATE in [t.uri_template for t in templates],
        f"got {[t.uri_template for t in templates]}",
    )

    with c.step("resources/read test://static-text"):
        rr = await client.read_resource("test://static-text")
    c.ok(
        "resources/read test://static-text returns the exact text",
        len(rr.contents) == 1
        and getattr(rr.contents[0], "text", None) == STATIC_TEXT
        and rr.contents[0].mime_type == "text/plain",
        f"got {short(rr)}",
    )

    with c.step("resources/read test://static-binary"):
        rr = await client.read_resource("test://static-binary")
    blob = getattr(rr.contents[0], "blob", None) if rr.contents else None
    c.ok(
        "resources/read test://static-binary returns a PNG blob",
        blob is not None and base64.b64decode(blob).startswith(PNG_MAGIC),
        f"got {short(rr)}",
    )

    with c.step("resources/read test://template/42/data"):
        rr = await client.read_resource("test://template/42/data")
    data = json.loads(rr.contents[0].text) if rr.contents and getattr(rr.contents[0], "text", None) else None
    c.ok(
        "resources/read test://template/42/data (template expanded)",
        str(rr.contents[0].uri) == "test://template/42/data" and isinstance(data, dict) and data.get("id") == "42",
        f"got {short(rr)}",
    )

    with c.step("resources/read an unknown resource"):
        try:
            rr = await client.read_resource("test://no-such-resource")
            raised = None
        except MCPError as e:
            raised = e
    c.ok(
        "resources/read an unknown resource: -32602 (not -32002 in 2026-07-28)",
        raised is not None and raised.code == -32602,
        f"got {f'error {raised.code} {raised.message}' if raised else short(rr)}",
    )

    # --- prompts ---------------------------------------------------------------------------
    with c.step("prompts/list"):
        prompts, _ = await list_all(client.list_prompts, "prompts")
    pnames = [p.name for p in prompts]
    missing = [n for n in EXPECTED_PROMPTS if n not in pnames]
    c.ok("prompts/list has the reference prompts", not missing, f"missing {missing}; got {pnames}")
    args = {p.name: sorted(a.name for a in (p.arguments or [])) for p in prompts}
    c.ok(
        "prompts/list: test_prompt_with_arguments takes arg1 and arg2",
        args.get("test_prompt_with_arguments") == ["arg1", "arg2"],
        f"got {args.get('test_prompt_with_arguments')}",
    )

    with c.step("prompts/get test_simple_prompt"):
        g = await client.get_prompt("test_simple_prompt")
    c.ok(
        "prompts/get test_simple_prompt",
        len(g.messages) == 1 and g.messages[0].role == "user" and g.messages[0].content.text.startswith("This is a simple"),
        f"got {short(g)}",
    )

    with c.step("prompts/get test_prompt_with_arguments"):
        g = await client.get_prompt("test_prompt_with_arguments", {"arg1": "interopValue1", "arg2": "interopValue2"})
    ptext = " ".join(m.content.text for m in g.messages if m.content.type == "text")
    c.ok(
        "prompts/get test_prompt_with_arguments contains arg1 and arg2",
        "interopValue1" in ptext and "interopValue2" in ptext,
        f"got {short(g)}",
    )

    with c.step("prompts/get test_prompt_with_embedded_resource"):
        g = await client.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"})
    emb = [m.content for m in g.messages if m.content.type == "resource"]
    c.ok(
        "prompts/get test_prompt_with_embedded_resource embeds the resource",
        bool(emb) and str(emb[0].resource.uri) == "test://example-resource",
        f"got {short(g)}",
    )

    with c.step("prompts/get test_prompt_with_image"):
        g = await client.get_prompt("test_prompt_with_image")
    c.ok(
        "prompts/get test_prompt_with_image has a PNG image",
        any(m.content.type == "image" and m.content.mime_type == "image/png" for m in g.messages),
        f"got {short(g)}",
    )

    with c.step("completion/complete"):
        comp = await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "te"},
        )
    c.ok(
        "completion/complete arg1 'te' -> test1, test2",
        comp.completion.values == ["test1", "test2"],
        f"got {short(comp)}",
    )
    with c.step("completion/complete (template)"):
        comp = await client.complete(
            types.ResourceTemplateReference(type="ref/resource", uri=EXPECTED_TEMPLATE),
            {"name": "id", "value": "1"},
        )
    c.ok(
        "completion/complete template id '1' -> 1, 123",
        comp.completion.values == ["1", "123"],
        f"got {short(comp)}",
    )

    # --- subscriptions/listen --------------------------------------------------------------
    with c.step("subscriptions/listen", timeout=30):
        async with client.listen(
            tools_list_changed=True,
            prompts_list_changed=True,
            resource_subscriptions=["test://watched-resource"],
        ) as sub:
            honored = sub.honored
            c.ok(
                "subscriptions/listen: acknowledged with the filter honored",
                honored.tools_list_changed is True
                and honored.prompts_list_changed is True
                and list(honored.resource_subscriptions or []) == ["test://watched-resource"],
                f"honored {short(honored)}",
            )
            r = await client.call_tool("test_trigger_tool_change", {})
            with anyio.fail_after(5):
                event = await sub.__anext__()
            c.ok(
                "subscriptions/listen: tools list_changed after a tool was added",
                joined(r) == "dynamic_tool added" and isinstance(event, ToolsListChanged),
                f"trigger said {joined(r)!r}; event {event!r}",
            )
            after = [t.name for t in (await list_all(client.list_tools, "tools"))[0]]
            c.ok("tools/list after the change has dynamic_tool", "dynamic_tool" in after, f"got {after}")
            r = await client.call_tool("test_trigger_prompt_change", {})
            with anyio.fail_after(5):
                event = await sub.__anext__()
            c.ok(
                "subscriptions/listen: prompts list_changed after a prompt was added",
                joined(r) == "dynamic_prompt added" and isinstance(event, PromptsListChanged),
                f"trigger said {joined(r)!r}; event {event!r}",
            )
            # Put the server back as it was.
            await client.call_tool("test_trigger_tool_change", {})
            await client.call_tool("test_trigger_prompt_change", {})
    after = [t.name for t in (await list_all(lambda cursor: client.list_tools(cursor=cursor, cache_mode="refresh"), "tools"))[0]]
    c.ok("tools/list after removing it again lacks dynamic_tool", "dynamic_tool" not in after, f"got {after}")


async def main(argv: list[str]) -> int:
    if not argv:
        print(f"usage: {sys.argv[0]} URL | SERVER_COMMAND [ARGS...]", file=sys.stderr)
        return 2
    if argv[0].startswith(("http://", "https://")):
        server: Any = argv[0]
        transport = "Streamable HTTP"
    else:
        server = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        transport = "stdio"
    rec = Recorder()
    checks = Checks()
    failure: CheckFailed | None = None

    def new_client(**callbacks: Any) -> Client:
        return Client(
            server,
            read_timeout_seconds=REQUEST_TIMEOUT,
            client_info=types.Implementation(name="mcp-interop-python-modern", version="1.0.0"),
            **callbacks,
        )

    print(f"python-modern: mcp {_sdk_version()} over {transport} against: {' '.join(argv)}", flush=True)
    try:
        with anyio.fail_after(TOTAL_TIMEOUT):
            client = new_client(
                logging_callback=rec.on_log,
                elicitation_callback=rec.on_elicitation,
                sampling_callback=rec.on_sampling,
                list_roots_callback=rec.on_roots,
            )
            async with client:
                try:
                    await run_checks(client, rec, checks, new_client)
                except CheckFailed as e:
                    failure = e
                except Exception as e:  # noqa: BLE001
                    failure = CheckFailed(f"the check after {checks.last!r}", f"{type(e).__name__}: {_describe(e)}")
    except TimeoutError:
        failure = failure or CheckFailed("run", f"the whole run exceeded {TOTAL_TIMEOUT:g}s (after {checks.last!r})")
    except Exception as e:  # noqa: BLE001 - report anything the SDK or the connection raised
        if failure is None:
            failure = CheckFailed("connect" if checks.passed == 0 else "run", f"{type(e).__name__}: {_describe(e)}")
    known = f", {checks.known} known failures skipped" if checks.known else ""
    if failure is not None:
        print(f"FAIL {failure.check}: {failure.detail}", flush=True)
        print(f"python-modern: {checks.passed} passed, 1 failed{known}", flush=True)
        return 1
    print(f"python-modern: {checks.passed} passed, 0 failed{known}", flush=True)
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
