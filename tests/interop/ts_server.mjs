#!/usr/bin/env node
// A small MCP server written with the official TypeScript SDK 2.x (`@modelcontextprotocol/server`),
// for driving with our `mcp` CLI (tests/interop/cli_client.py) in both eras.
//
//   node tests/interop/ts_server.mjs                 # stdio (serveStdio: both eras)
//   node tests/interop/ts_server.mjs --http PORT     # Streamable HTTP at http://127.0.0.1:PORT/mcp
//
// Over HTTP, 2026-07-28 requests go to the SDK's stateless `createMcpHandler`; legacy requests
// (as classified by the SDK's own `isLegacyRequest`) go to a sessionful
// `WebStandardStreamableHTTPServerTransport`, the SDK's documented pattern for keeping 2025-era
// sessions, so that a legacy client can be asked questions mid-call. A tiny node:http adapter
// turns Node requests into web-standard ones (no framework package needed).
//
// Tools: `echo`, `add` (structured output), `fail` (a tool error), `greet` (elicits a name; says
// so when declined), `ask_model` (samples the client's model): on 2026-07-28 they ask through
// `input_required` results, on a legacy connection through server-to-client requests.
// Resource `interop://greeting`. Prompt `review` (argument `code`).

import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  inputResponse,
  isLegacyRequest,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const GREETING = 'Hello from the TypeScript SDK server.';
const NAME_SCHEMA = {
  type: 'object',
  properties: { name: { type: 'string', description: 'Your name' } },
  required: ['name'],
};
const object = (properties, required = Object.keys(properties)) =>
  fromJsonSchema({ type: 'object', properties, required });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// One server per era (and, over HTTP, per request or per legacy session), as the SDK wants.
function build({ era }) {
  const server = new McpServer(
    { name: 'interop-ts-server', version: '1.0.0' },
    { instructions: 'A small server written with the TypeScript SDK, for interop tests.' },
  );
  server.registerTool(
    'echo',
    { description: 'Returns its `text` argument.', inputSchema: object({ text: { type: 'string' } }) },
    async ({ text: t }) => text(t),
  );
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers (structured output).',
      inputSchema: object({ a: { type: 'number' }, b: { type: 'number' } }),
      outputSchema: object({ sum: { type: 'number' } }),
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b } }),
  );
  server.registerTool('fail', { description: 'Always fails, as a tool error.' }, async () => ({
    content: [{ type: 'text', text: 'this tool always fails' }],
    isError: true,
  }));
  server.registerTool('greet', { description: "Asks the user's name (elicitation), then greets them." }, async (ctx) => {
    let answer;
    if (era === 'legacy') {
      answer = await ctx.mcpReq.elicitInput({ message: 'What is your name?', requestedSchema: NAME_SCHEMA });
    } else {
      const view = inputResponse(ctx.mcpReq.inputResponses, 'name');
      if (view.kind !== 'elicit') {
        return inputRequired({
          inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: NAME_SCHEMA }) },
        });
      }
      answer = view;
    }
    return text(answer.action === 'accept' ? `Hello, ${answer.content?.name}!` : `No name given (${answer.action})`);
  });
  server.registerTool(
    'ask_model',
    { description: "Asks the client's model about `topic` (sampling).", inputSchema: object({ topic: { type: 'string' } }) },
    async ({ topic }, ctx) => {
      const question = {
        messages: [{ role: 'user', content: { type: 'text', text: `Say something about ${topic}` } }],
        maxTokens: 50,
      };
      let reply;
      if (era === 'legacy') {
        reply = await ctx.mcpReq.requestSampling(question);
      } else {
        const view = inputResponse(ctx.mcpReq.inputResponses, 'reply');
        if (view.kind !== 'sampling') {
          return inputRequired({ inputRequests: { reply: inputRequired.createMessage(question) } });
        }
        reply = view.result;
      }
      const said = [].concat(reply.content)[0]?.text ?? '?';
      return text(`The model said: ${said}`);
    },
  );
  server.registerResource('greeting', 'interop://greeting', { mimeType: 'text/plain', description: 'A fixed greeting.' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: GREETING }],
  }));
  server.registerPrompt(
    'review',
    { description: 'Asks for a review of `code`.', argsSchema: object({ code: { type: 'string' } }) },
    ({ code }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Please review this code: ${code}` } }] }),
  );
  return server;
}

function serveHttp(port) {
  const modern = createMcpHandler(build, { legacy: 'reject' });
  const sessions = new Map();
  const legacy = async (request) => {
    const id = request.headers.get('mcp-session-id');
    if (id) {
      const transport = sessions.get(id);
      return transport
        ? transport.handleRequest(request)
        : Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
    }
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
      onsessionclosed: (sid) => sessions.delete(sid),
    });
    await build({ era: 'legacy' }).connect(transport);
    return transport.handleRequest(request);
  };
  const handle = async (request) => ((await isLegacyRequest(request)) ? legacy(request) : modern.fetch(request));

  const http = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, [].concat(v).join(', '));
      const aborted = new AbortController();
      res.on('close', () => aborted.abort());
      const hasBody = !['GET', 'HEAD', 'DELETE'].includes(req.method) && chunks.length > 0;
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
        signal: aborted.signal,
      });
      const response = await handle(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.flushHeaders();
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e?.message ?? e));
    }
  });
  http.listen(port, '127.0.0.1', () => console.error(`ts_server: listening on http://127.0.0.1:${port}/mcp`));
  const stop = () => {
    http.close();
    http.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

const args = process.argv.slice(2);
if (args.length === 2 && args[0] === '--http') {
  serveHttp(Number(args[1]));
} else if (args.length === 0) {
  serveStdio(build);
} else {
  console.error('usage: node ts_server.mjs [--http PORT]');
  process.exit(2);
}
