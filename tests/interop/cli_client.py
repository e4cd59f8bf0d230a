#!/usr/bin/env python3
"""Interop check the other way round: our `mcp` command line as the client of a server written with
an official SDK (tests/interop/python_server.py, tests/interop/ts_server.mjs), in both eras.

    python3 tests/interop/cli_client.py LABEL SERVER_NAME MCP_BIN TARGET

TARGET is what the CLI takes: an http(s) URL or a quoted command line (stdio). SERVER_NAME is the
`serverInfo.name` the server must report. Runs `mcp info | list | call | read | prompt` against
it, first letting the CLI detect the era (it must find 2026-07-28), then pinned to the legacy
revision 2025-11-25 (`--protocol-version`). Every command is bounded by a timeout (and killed
with whatever it spawned when it overruns). Standard library only. Each check runs on its own
(a failure does not stop the others); prints `PASS ...` / `FAIL ...: expected vs got` lines and
ends with `LABEL: N passed, M failed`. Exits 1 if any check failed. Checks listed in KNOWN_FAILS
are skipped with a `KNOWN-FAIL:` line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from typing import Any, Callable

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
COMMAND_TIMEOUT = 30  # seconds for one CLI run (the CLI's own --timeout is lower)
CLI_TIMEOUT = "20"

EXPECTED_TOOLS = ["add", "ask_model", "echo", "fail", "greet"]
GREETINGS = {
    "interop-python-server": "Hello from the Python SDK server.",
    "interop-ts-server": "Hello from the TypeScript SDK server.",
}
UNICODE_TEXT = 'interop ✓ "quoted" \\ back\nslash, newline and emoji 🦀'

# Checks skipped with a printed `KNOWN-FAIL:` line: {check name: why}. Only for a bug of ours
# that is reported and waiting for a fix in the library.
KNOWN_FAILS: dict[str, str] = {}


class Run:
    def __init__(self, argv: list[str], rc: int | None, out: str, err: str) -> None:
        self.argv, self.rc, self.out, self.err = argv, rc, out, err

    def json(self) -> Any:
        return json.loads(self.out)

    def describe(self) -> str:
        cut = lambda s: s if len(s) <= 600 else s[:600] + "..."  # noqa: E731
        return f"`{' '.join(self.argv[1:])}` exited {self.rc}; stdout {cut(self.out)!r}; stderr {cut(self.err)!r}"


class Cli:
    def __init__(self, label: str, mcp_bin: str, target: str) -> None:
        self.label, self.mcp_bin, self.target = label, mcp_bin, target
        self.passed = self.failed = self.known = 0
        self.current: subprocess.Popen[str] | None = None
        # Stopped from outside (run.sh's trap): take the running command, and its server, along.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)

    def _stop(self, signum: int, _frame: Any) -> None:
        if self.current is not None and self.current.poll() is None:
            os.killpg(self.current.pid, signal.SIGKILL)
        sys.exit(128 + signum)

    def run(self, command: str, *args: str) -> Run:
        argv = [self.mcp_bin, command, self.target, *args, "--timeout", CLI_TIMEOUT]
        # A session of its own, so that a stuck run is killed together with any server it spawned.
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            start_new_session=True,
        )
        self.current = proc
        try:
            out, err = proc.communicate(timeout=COMMAND_TIMEOUT)
            return Run(argv, proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            return Run(argv, None, out, err + f"\n(killed after {COMMAND_TIMEOUT}s)")

    def check(self, name: str, run: Run, cond: Callable[[Run], bool], expected: str) -> None:
        if name in KNOWN_FAILS:
            self.known += 1
            print(f"KNOWN-FAIL: {name} ({KNOWN_FAILS[name]})", flush=True)
            return
        try:
            good = bool(cond(run))
        except Exception as e:  # noqa: BLE001 - e.g. stdout that is not the JSON expected
            good = False
            expected += f" ({type(e).__name__}: {e})"
        if good:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}: expected {expected}; got {run.describe()}", flush=True)


def texts(result: dict[str, Any]) -> list[str]:
    return [c.get("text") for c in result.get("content", []) if c.get("type") == "text"]


def check_era(c: Cli, server_name: str, transport: str, pin: str | None) -> None:
    era, version = ("legacy", LEGACY) if pin else ("modern", MODERN)
    extra = ["--protocol-version", pin] if pin else []
    tag = f" [{pin} pinned]" if pin else ""

    r = c.run("info", "--json", *extra)
    c.check(
        f"info: era {era}, revision {version}, {transport}{tag}",
        r,
        lambda r: r.rc == 0
        and r.json()["era"] == era
        and r.json()["protocolVersion"] == version
        and r.json()["transport"] == transport
        and r.json()["serverInfo"]["name"] == server_name
        and "tools" in r.json()["capabilities"]
        and "for interop tests" in r.json()["instructions"],
        f"exit 0, era {era}, protocolVersion {version}, transport {transport}, serverInfo.name {server_name}",
    )

    r = c.run("list", "--json", *extra)
    c.check(
        f"list --json: tools, resource, prompt{tag}",
        r,
        lambda r: r.rc == 0
        and sorted(t["name"] for t in r.json()["tools"]) == EXPECTED_TOOLS
        and [x["uri"] for x in r.json()["resources"]] == ["interop://greeting"]
        and [(p["name"], [a["name"] for a in p.get("arguments", [])]) for p in r.json()["prompts"]]
        == [("review", ["code"])],
        f"tools {EXPECTED_TOOLS}, resource interop://greeting, prompt review(code)",
    )

    r = c.run("call", "echo", "text=hi", "--json", *extra)
    c.check(
        f"call echo text=hi --json{tag}",
        r,
        lambda r: r.rc == 0 and texts(r.json()) == ["hi"] and not r.json().get("isError"),
        "exit 0 and one text item 'hi'",
    )

    r = c.run("call", "add", "a=1.5", "b=2", "--json", *extra)
    c.check(
        f"call add a=1.5 b=2 --json: structuredContent{tag}",
        r,
        lambda r: r.rc == 0 and r.json()["structuredContent"] == {"sum": 3.5},
        "exit 0 and structuredContent {sum: 3.5}",
    )

    r = c.run("call", "greet", "--elicit", '{"name": "Ada"}', "--json", *extra)
    c.check(
        f"call greet --elicit (elicitation answered){tag}",
        r,
        lambda r: r.rc == 0 and texts(r.json()) == ["Hello, Ada!"] and "What is your name?" in r.err,
        "exit 0, text 'Hello, Ada!', and the question shown on stderr",
    )

    r = c.run("call", "ask_model", "topic=cats", "--sample-reply", "Cats purr.", "--json", *extra)
    c.check(
        f"call ask_model --sample-reply (sampling answered){tag}",
        r,
        lambda r: r.rc == 0 and texts(r.json()) == ["The model said: Cats purr."],
        "exit 0 and text 'The model said: Cats purr.'",
    )

    r = c.run("read", "interop://greeting", "--json", *extra)
    c.check(
        f"read interop://greeting --json{tag}",
        r,
        lambda r: r.rc == 0
        and [(x["uri"], x.get("mimeType"), x.get("text")) for x in r.json()["contents"]]
        == [("interop://greeting", "text/plain", GREETINGS[server_name])],
        f"exit 0 and one text/plain content {GREETINGS[server_name]!r}",
    )

    r = c.run("prompt", "review", "code=x = 1", "--json", *extra)
    c.check(
        f"prompt review code=... --json{tag}",
        r,
        lambda r: r.rc == 0
        and [(m["role"], m["content"].get("text")) for m in r.json()["messages"]]
        == [("user", "Please review this code: x = 1")],
        "exit 0 and one user message 'Please review this code: x = 1'",
    )

    if pin:
        return

    # Modern era only from here: human output, errors, declines.
    r = c.run("list")
    c.check(
        "list (table) shows the tools and the resource",
        r,
        lambda r: r.rc == 0 and "Tools (5)" in r.out and "interop://greeting" in r.out and "review" in r.out,
        "exit 0 and a table with 'Tools (5)', interop://greeting and review",
    )

    r = c.run("call", "echo", "--args", json.dumps({"text": UNICODE_TEXT}), "--json")
    c.check(
        "call echo (quotes, backslash, newline, emoji) --json",
        r,
        lambda r: r.rc == 0 and texts(r.json()) == [UNICODE_TEXT],
        f"exit 0 and the text {UNICODE_TEXT!r} back",
    )

    r = c.run("call", "fail")
    c.check(
        "call fail: a tool error (exit 1)",
        r,
        lambda r: r.rc == 1 and "always fails" in r.err,
        "exit 1 and the tool's message on stderr",
    )

    r = c.run("call", "greet", "--decline", "--json")
    c.check(
        "call greet --decline",
        r,
        lambda r: r.rc == 0 and texts(r.json()) == ["No name given (decline)"],
        "exit 0 and text 'No name given (decline)'",
    )

    r = c.run("call", "ask_model", "topic=cats")
    c.check(
        "call ask_model without --sample-reply: sampling refused",
        r,
        lambda r: r.rc not in (0, None) and "--sample-reply" in r.err,
        "a non-zero exit naming --sample-reply",
    )

    # Every other revision, pinned: the CLI must land exactly on it.
    got = []
    for version in (MODERN, "2025-06-18", "2025-03-26", "2024-11-05"):
        r = c.run("info", "--json", "--protocol-version", version)
        try:
            got.append((version, r.rc, r.json()["era"], r.json()["protocolVersion"]))
        except Exception:  # noqa: BLE001 - not the JSON expected
            got.append((version, r.rc, "?", r.err.strip()[-200:]))
    want = [(v, 0, "modern" if v == MODERN else "legacy", v) for v, *_ in got]
    c.check(
        "info pinned to 2026-07-28, 2025-06-18, 2025-03-26, 2024-11-05",
        Run(["mcp", "info", "--protocol-version", "(each)"], 0, json.dumps(got), ""),
        lambda _: got == want,
        f"{want}",
    )

    r = c.run("call", "nope")
    c.check(
        "call an unknown tool: refused (exit 2)",
        r,
        lambda r: r.rc == 2 and "nope" in r.err,
        "exit 2 naming the tool",
    )


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(f"usage: {sys.argv[0]} LABEL SERVER_NAME MCP_BIN TARGET", file=sys.stderr)
        return 2
    label, server_name, mcp_bin, target = argv
    transport = "http" if target.startswith(("http://", "https://")) else "stdio"
    c = Cli(label, mcp_bin, target)
    print(f"{label}: {mcp_bin} against {server_name} over {transport}: {target}", flush=True)
    check_era(c, server_name, transport, None)
    check_era(c, server_name, transport, LEGACY)
    known = f", {c.known} known failures skipped" if c.known else ""
    print(f"{label}: {c.passed} passed, {c.failed} failed{known}", flush=True)
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
