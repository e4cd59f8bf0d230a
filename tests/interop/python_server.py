#!/usr/bin/env python3
"""A small MCP server written with the official Python SDK 2.x (PyPI `mcp`), for driving with our
`mcp` CLI (tests/interop/cli_client.py) in both eras.

    python tests/interop/python_server.py                 # stdio
    python tests/interop/python_server.py --http PORT     # Streamable HTTP at http://127.0.0.1:PORT/mcp

Both transports serve 2026-07-28 (stateless, `server/discover`, `input_required` rounds) and the
legacy revisions (`initialize`; over HTTP with sessions, so that a legacy client can be asked
questions mid-call). The questions are asked through the SDK's era-neutral `Resolve(...)`
parameters: `input_required` rounds for a 2026-07-28 request, server-to-client requests for a
legacy one.

Tools: `echo`, `add` (structured output), `fail` (a tool error), `greet` (elicits a name; says
so when declined), `ask_model` (samples the client's model). Resource `interop://greeting`.
Prompt `review` (argument `code`).
"""

from __future__ import annotations

import sys
from typing import Annotated

from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

from mcp.server.mcpserver import (
    AcceptedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
    Sample,
)
from mcp.server.mcpserver.exceptions import ToolError

GREETING = "Hello from the Python SDK server."

mcp = MCPServer(
    "interop-python-server",
    version="1.0.0",
    instructions="A small server written with the Python SDK, for interop tests.",
    log_level="WARNING",
)


@mcp.tool()
def echo(text: str) -> str:
    """Returns its `text` argument."""
    return text


class Sum(BaseModel):
    sum: float


@mcp.tool()
def add(a: float, b: float) -> Sum:
    """Adds two numbers (structured output)."""
    return Sum(sum=a + b)


@mcp.tool()
def fail() -> str:
    """Always fails, as a tool error."""
    raise ToolError("this tool always fails")


class Name(BaseModel):
    name: str


async def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool()
async def greet(person: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Asks the user's name (elicitation), then greets them."""
    if isinstance(person, AcceptedElicitation):
        return f"Hello, {person.data.name}!"
    return f"No name given ({person.action})"


def ask(topic: str) -> Sample:
    question = SamplingMessage(role="user", content=TextContent(type="text", text=f"Say something about {topic}"))
    return Sample([question], max_tokens=50)


@mcp.tool()
async def ask_model(topic: str, reply: Annotated[CreateMessageResult, Resolve(ask)]) -> str:
    """Asks the client's model about `topic` (sampling)."""
    content = reply.content
    text = content.text if isinstance(content, TextContent) else "?"
    return f"The model said: {text}"


@mcp.resource("interop://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed greeting."""
    return GREETING


@mcp.prompt()
def review(code: str) -> str:
    """Asks for a review of `code`."""
    return f"Please review this code: {code}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) == 1:
        mcp.run()
    else:
        print(f"usage: {sys.argv[0]} [--http PORT]", file=sys.stderr)
        sys.exit(2)
