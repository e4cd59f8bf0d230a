#!/usr/bin/env node
// The official TypeScript SDK 1.x (legacy era) through `mcp proxy --config FILE` (the gateway),
// over Streamable HTTP. Run by tests/e2e/run.sh `gateway` (it lives here for this directory's
// node_modules):
//
//   node tests/interop/ts_gateway_client.mjs URL FILES_DIR
//
// The gateway serves three servers under their names: `everything` (server-everything),
// `files` (server-filesystem rooted at FILES_DIR) and `ref` (`mcp serve`). Checks the prefixed
// tools of each, calls through, progress, and an upstream elicitation answered by this client.
// Prints `PASS ...` per check; the first failure prints `FAIL ...` and exits 1.

import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const TOTAL_TIMEOUT_MS = 90_000;
const opts = { timeout: 30_000 };
const [url, files] = process.argv.slice(2);

let passed = 0;
function ok(check, cond, detail) {
  if (!cond) {
    console.log(`FAIL ${check}: ${typeof detail === 'function' ? detail() : JSON.stringify(detail)}`);
    process.exit(1);
  }
  passed += 1;
  console.log(`PASS ${check}`);
}
const text = (r) => r.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

setTimeout(() => {
  console.log(`FAIL the run did not finish within ${TOTAL_TIMEOUT_MS} ms`);
  process.exit(1);
}, TOTAL_TIMEOUT_MS).unref();

const asked = [];
const client = new Client({ name: 'ts-gateway-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, (req) => {
  asked.push(req.params);
  return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } };
});
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
const version = transport.protocolVersion;
ok('a legacy revision negotiated', typeof version === 'string' && version < '2026', version);

const { tools } = await client.listTools(undefined, opts);
const names = tools.map((t) => t.name);
const stray = names.filter((n) => !/^(everything|files|ref)_/.test(n));
ok('every tool is under a prefix', stray.length === 0, stray);
for (const name of ['everything_echo', 'everything_trigger-elicitation-request', 'files_list_allowed_directories',
  'files_write_file', 'files_read_text_file', 'ref_echo', 'ref_test_tool_with_progress']) {
  ok(`tools/list has ${name}`, names.includes(name), names);
}

let r = await client.callTool({ name: 'everything_echo', arguments: { message: 'hi' } }, undefined, opts);
ok('everything_echo', !r.isError && text(r) === 'Echo: hi', r);
const path = join(files, 'from-typescript.txt');
r = await client.callTool({ name: 'files_write_file', arguments: { path, content: 'ts was here' } }, undefined, opts);
ok('files_write_file', !r.isError, r);
r = await client.callTool({ name: 'files_read_text_file', arguments: { path } }, undefined, opts);
ok('files_read_text_file', !r.isError && text(r) === 'ts was here', r);
r = await client.callTool({ name: 'files_list_allowed_directories', arguments: {} }, undefined, opts);
ok('files_list_allowed_directories', !r.isError && text(r).includes(realpathSync(files)), r);
r = await client.callTool({ name: 'ref_echo', arguments: { text: 'through' } }, undefined, opts);
ok('ref_echo', !r.isError && text(r) === 'through', r);

const progress = [];
r = await client.callTool({ name: 'ref_test_tool_with_progress', arguments: {} }, undefined, {
  ...opts,
  onprogress: (p) => progress.push(p.progress),
});
ok('progress passes through', progress.join(',') === '0,50,100', progress);

r = await client.callTool({ name: 'everything_trigger-elicitation-request', arguments: {} }, undefined, opts);
ok('the upstream elicitation reached this client', asked.length === 1, asked);
ok('its answer reached the upstream tool', !r.isError && text(r).includes('- Name: Ada Lovelace'), r);

const read = await client.readResource({ uri: 'test://ref/template/5/data' }, opts);
ok('a prefixed resource template', read.contents[0]?.text?.includes('Data for ID: 5'), read);

await client.close();
console.log(`ts-gateway: ${passed} passed, 0 failed`);
process.exit(0);
