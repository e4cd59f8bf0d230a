// Benchmark peer: echo server on the official TypeScript MCP SDK, v2
// (@modelcontextprotocol/server + @modelcontextprotocol/node).
//
//   node server.mjs stdio
//   node server.mjs http PORT sessions    Streamable HTTP, stateful (Mcp-Session-Id), SSE responses
//   node server.mjs http PORT stateless   Streamable HTTP, stateless, JSON responses
//
// One tool, `echo`, returning its `text` argument as a single text block.
// Nothing is logged per call.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import {
    localhostHostValidation,
    localhostOriginValidation,
    NodeStreamableHTTPServerTransport,
    toNodeHandler
} from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

function buildServer() {
    const server = new McpServer({ name: 'ts-echo', version: '0.0.0' });
    server.registerTool(
        'echo',
        { description: 'Echo the text back', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    return server;
}

function usage() {
    console.error('usage: node server.mjs stdio | node server.mjs http PORT (sessions|stateless)');
    process.exit(2);
}

function onSignal(fn) {
    for (const sig of ['SIGTERM', 'SIGINT']) {
        process.once(sig, () => {
            // Do not wait long for open streams to drain.
            setTimeout(() => process.exit(0), 2000).unref();
            Promise.resolve()
                .then(fn)
                .finally(() => process.exit(0));
        });
    }
}

function listen(handler, port) {
    const validateHost = localhostHostValidation();
    const validateOrigin = localhostOriginValidation();
    const server = createServer((req, res) => {
        if (!validateHost(req, res) || !validateOrigin(req, res)) return;
        const path = (req.url ?? '').split('?', 1)[0];
        if (path !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        handler(req, res).catch(() => {
            if (!res.headersSent) res.writeHead(500);
            res.end();
        });
    });
    server.listen(port, '127.0.0.1');
    return server;
}

// Stateless: the SDK's v2 HTTP entry point. A fresh McpServer per request;
// 2026-07-28 requests are served on the modern path, 2025-era requests by
// the SDK's built-in stateless legacy fallback.
function serveStateless(port) {
    const handler = createMcpHandler(buildServer, { responseMode: 'json' });
    const nodeHandler = toNodeHandler(handler);
    const server = listen((req, res) => nodeHandler(req, res), port);
    onSignal(async () => {
        server.close();
        await handler.close();
    });
}

async function readJson(req) {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    if (chunks.length === 0) return undefined;
    try {
        return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
        return undefined;
    }
}

function jsonError(res, status, code, message) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

// Sessions: the SDK's sessionful 2025-era transport, one
// NodeStreamableHTTPServerTransport (+ McpServer) per session, routed by
// Mcp-Session-Id, as in the SDK's "Sessions, state, and scaling" guide.
function serveSessions(port) {
    const sessions = new Map();
    const route = async (req, res) => {
        const body = req.method === 'POST' ? await readJson(req) : undefined;
        const sessionId = req.headers['mcp-session-id'];
        if (typeof sessionId === 'string' && sessions.has(sessionId)) {
            await sessions.get(sessionId).handleRequest(req, res, body);
            return;
        }
        if (sessionId === undefined && req.method === 'POST' && isInitializeRequest(body)) {
            const transport = new NodeStreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: id => {
                    sessions.set(id, transport);
                }
            });
            transport.onclose = () => {
                if (transport.sessionId) sessions.delete(transport.sessionId);
            };
            await buildServer().connect(transport);
            await transport.handleRequest(req, res, body);
            return;
        }
        if (sessionId !== undefined) {
            jsonError(res, 404, -32001, 'Session not found');
            return;
        }
        jsonError(res, 400, -32000, 'Bad Request: Session ID required');
    };
    const server = listen(route, port);
    onSignal(async () => {
        server.close();
        await Promise.all([...sessions.values()].map(t => t.close().catch(() => {})));
    });
}

const [mode, portArg, httpMode] = process.argv.slice(2);
if (mode === 'stdio' && portArg === undefined) {
    const handle = serveStdio(buildServer);
    onSignal(() => handle.close());
} else if (mode === 'http' && /^\d+$/.test(portArg ?? '') && (httpMode === 'sessions' || httpMode === 'stateless')) {
    const port = Number(portArg);
    if (httpMode === 'sessions') serveSessions(port);
    else serveStateless(port);
} else {
    usage();
}
