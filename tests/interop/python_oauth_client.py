#!/usr/bin/env python3
"""Interop check: the official Python MCP SDK 2.x as an OAuth client of our server protected by
a real authorization server.

    python tests/interop/python_oauth_client.py target/release/mcp

Starts oidc-provider (tests/auth/provider.mjs, Node.js; `npm ci` in tests/auth first) and
`mcp serve --http` as a protected resource of it (`--auth-issuer`, `--auth-audience`,
`--scope mcp`), both on 127.0.0.1. Then the SDK's `OAuthClientProvider` meets the 401, reads our
protected resource metadata, registers itself dynamically, and runs the authorization code flow
with PKCE; this script plays the user in the browser (fills in the provider's login and consent
pages) and hands the code back. With the token, the SDK lists the tools and calls one, in the
2026-07-28 era. Prints one `PASS ...` line per check; on a failed check prints `FAIL ...` and
exits 1. The last line is `python-oauth: N passed, N failed`. Every server it starts is
stopped on exit; the whole run is bounded.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.oauth2 import AuthorizationCodeResult
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

ROOT = Path(__file__).resolve().parents[2]
TOTAL_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class User:
    """The user in the browser: any login, then consent; stops at the redirect URI."""

    def __init__(self, redirect_uri: str) -> None:
        self.redirect_uri = redirect_uri
        self.result: AuthorizationCodeResult | None = None
        self.authorization_url = ""

    async def authorize(self, url: str) -> None:
        self.authorization_url = url
        async with httpx2.AsyncClient(follow_redirects=False, timeout=15.0) as browser:
            response = await browser.get(url)
            for _ in range(12):
                if response.is_redirect:
                    target = urljoin(str(response.url), response.headers["location"])
                    if target.startswith(self.redirect_uri):
                        query = parse_qs(urlparse(target).query)
                        iss = query.get("iss", [None])[0]
                        self.result = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0], iss=iss)
                        return
                    response = await browser.get(target)
                    continue
                body = response.text
                action = body.split('action="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
                form = (
                    {"prompt": "login", "login": "py-user", "password": "anything"}
                    if 'name="login"' in body
                    else {"prompt": "consent"}
                )
                response = await browser.post(urljoin(str(response.url), action), data=form)
        raise AssertionError("the authorization never came back to the redirect URI")

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None, "no authorization response"
        return self.result


def start(argv: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen(argv, start_new_session=True, **kw)


def wait_listening(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


async def main(mcp_bin: str) -> int:
    passed = failed = 0

    def check(name: str, ok: bool, detail: str = "") -> None:
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"PASS {name}", flush=True)
        else:
            failed += 1
            print(f"FAIL {name}: {detail}", flush=True)
            raise SystemExit(1)

    provider = start(["node", str(ROOT / "tests/auth/provider.mjs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    server = None
    try:
        issuer = json.loads(provider.stdout.readline())["issuer"]
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        server = start(
            [mcp_bin, "serve", "--http", f"127.0.0.1:{port}", "--auth-issuer", issuer, "--auth-audience", url,
             "--scope", "mcp"],
            stdin=subprocess.DEVNULL,
        )
        wait_listening(port, server)
        async with httpx2.AsyncClient(timeout=10.0) as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        check("no token: 401 with a Bearer challenge", refused.status_code == 401
              and "resource_metadata=" in refused.headers.get("www-authenticate", ""), str(refused.headers))

        redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
        user = User(redirect_uri)
        metadata = OAuthClientMetadata(
            redirect_uris=[redirect_uri], client_name="python-interop", grant_types=["authorization_code", "refresh_token"]
        )
        storage = Memory()
        auth = OAuthClientProvider(url, metadata, storage, redirect_handler=user.authorize, callback_handler=user.callback)
        http = httpx2.AsyncClient(auth=auth, timeout=15.0)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            check("the SDK ran the authorization code flow", user.result is not None and "code_challenge=" in user.authorization_url
                  and "resource=" in user.authorization_url, user.authorization_url)
            check("the SDK registered itself dynamically", storage.client is not None and bool(storage.client.client_id))
            check("a token was issued", storage.tokens is not None and "mcp" in (storage.tokens.scope or ""), str(storage.tokens))
            tools = await client.list_tools()
            names = [t.name for t in tools.tools]
            check("tools/list with the token", "echo" in names, str(names))
            result = await client.call_tool("echo", {"text": "authorized"})
            text = [c.text for c in result.content if isinstance(c, types.TextContent)]
            check("tools/call with the token", text == ["authorized"], str(result))
        await http.aclose()
    finally:
        for process in (server, provider):
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
    print(f"python-oauth: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)

    async def bounded() -> int:
        with anyio.fail_after(TOTAL_TIMEOUT):
            return await main(sys.argv[1])

    sys.exit(anyio.run(bounded))
