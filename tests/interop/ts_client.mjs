#!/usr/bin/env node
// Interop check: the official TypeScript MCP SDK (@modelcontextprotocol/sdk) as a stdio client.
//
//   node tests/interop/ts_client.mjs target/release/mcp serve
//
// Spawns the command given on argv through the SDK's StdioClientTransport, connects a `Client`
// and checks the conformance reference set (tools, resources, prompts). Prints one `PASS ...`
// line per check; on the first failed check prints `FAIL <check>: <expected vs got>` and exits
// 1. Every request has a timeout, and so has the whole run. The last line is
// `ts-sdk: N passed, N failed`. The same checks as python_client.py.

import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const TOTAL_TIMEOUT_MS = 60_000; // the whole run, server start-up included
const REQUEST_TIMEOUT_MS = 10_000; // each request

const SIMPLE_TEXT = 'This is a simple text response for testing.';
const STATIC_TEXT = 'This is the content of the static text resource.';
const SAMPLING_REPLY = 'This is a test response from the client';
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const EXPECTED_TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_logging',
  'test_tool_with_progress',
  'test_error_handling',
  'test_sampling',
  'test_elicitation',
  'json_schema_2020_12_tool',
  'echo',
];
const EXPECTED_RESOURCES = ['test://static-text', 'test://static-binary', 'test://watched-resource'];
const EXPECTED_TEMPLATE = 'test://template/{id}/data';
const EXPECTED_PROMPTS = [
  'test_simple_prompt',
  'test_prompt_with_arguments',
  'test_prompt_with_embedded_resource',
  'test_prompt_with_image',
];
const LEGACY_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

class CheckFailed extends Error {
  constructor(check, detail) {
    super(`${check}: ${detail}`);
    this.check = check;
    this.detail = detail;
  }
}

let passed = 0;
let lastPassed = '(none)';

function ok(check, cond, detail = 'assertion failed') {
  if (!cond) throw new CheckFailed(check, typeof detail === 'function' ? detail() : detail);
  passed += 1;
  lastPassed = check;
  console.log(`PASS ${check}`);
}

// Runs one check's requests; a rejected request (JSON-RPC error, timeout, closed connection,
// a result the SDK could not validate) fails that check.
async function step(check, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof CheckFailed) throw e;
    const code = e?.code !== undefined ? ` (code ${e.code})` : '';
    throw new CheckFailed(check, `${e?.name ?? 'Error'}${code}: ${e?.message ?? e}`);
  }
}

function short(value, limit = 400) {
  const text = JSON.stringify(value);
  return text === undefined || text.length <= limit ? String(text) : `${text.slice(0, limit)}...`;
}

const texts = (content) => (content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
const contentsText = (contents) => (contents ?? []).map((c) => c.text ?? '').join('');
const isPng = (b64) => typeof b64 === 'string' && Buffer.from(b64, 'base64').subarray(0, 8).equals(PNG_MAGIC);
const opts = { timeout: REQUEST_TIMEOUT_MS };

async function runChecks(client, rec) {
  // --- lifecycle (initialize happened in connect) ------------------------------------
  const version = rec.protocolVersion;
  const info = client.getServerVersion();
  const caps = client.getServerCapabilities() ?? {};
  ok(
    `initialize (protocolVersion ${version ?? '?'}, server ${info?.name} ${info?.version})`,
    info && typeof info.name === 'string' && LEGACY_VERSIONS.includes(version),
    () => `expected serverInfo and a protocolVersion among ${LEGACY_VERSIONS}, got ${version} / ${short(info)}`,
  );
  ok(
    'initialize: capabilities tools, resources, prompts, logging',
    caps.tools && caps.resources && caps.prompts && caps.logging,
    () => `got capabilities ${short(caps)}`,
  );
  await step('ping', () => client.ping(opts));
  ok('ping', true);

  // --- tools ---------------------------------------------------------------------------
  const { tools } = await step('tools/list', () => client.listTools(undefined, opts));
  const names = tools.map((t) => t.name);
  const missingTools = EXPECTED_TOOLS.filter((n) => !names.includes(n));
  ok('tools/list has the reference tools', missingTools.length === 0, () => `missing ${missingTools}; got ${names}`);
  const bad = tools.filter((t) => !t.description || typeof t.inputSchema !== 'object').map((t) => t.name);
  ok('tools/list: every tool has a description and an inputSchema', bad.length === 0, () => `lacking: ${bad}`);
  const schema = tools.find((t) => t.name === 'json_schema_2020_12_tool').inputSchema;
  ok(
    'tools/list: json_schema_2020_12_tool inputSchema kept verbatim',
    schema.$schema === 'https://json-schema.org/draft/2020-12/schema' &&
      schema.$defs?.address !== undefined &&
      schema.additionalProperties === false,
    () => `got ${short(schema)}`,
  );

  const call = (check, name, args, extra = {}) =>
    step(check, () => client.callTool({ name, arguments: args }, undefined, { ...opts, ...extra }));

  let r = await step('tools/call test_simple_text', () =>
    client.callTool({ name: 'test_simple_text' }, undefined, opts),
  );
  ok(
    'tools/call test_simple_text returns the exact text',
    !r.isError && short(texts(r.content)) === short([SIMPLE_TEXT]),
    () => `expected one text item ${short(SIMPLE_TEXT)}, got ${short(r)}`,
  );

  r = await call('tools/call test_image_content', 'test_image_content', {});
  const img = r.content.filter((x) => x.type === 'image');
  ok(
    'tools/call test_image_content returns a PNG image',
    img.length > 0 && img[0].mimeType === 'image/png' && isPng(img[0].data),
    () => `got ${short(r)}`,
  );

  r = await call('tools/call test_audio_content', 'test_audio_content', {});
  const audio = r.content.filter((x) => x.type === 'audio');
  ok(
    'tools/call test_audio_content returns audio/wav',
    audio.length > 0 && audio[0].mimeType === 'audio/wav' && !!audio[0].data,
    () => `got ${short(r)}`,
  );

  r = await call('tools/call test_embedded_resource', 'test_embedded_resource', {});
  const emb = r.content.filter((x) => x.type === 'resource');
  ok(
    'tools/call test_embedded_resource returns an embedded resource',
    emb.length > 0 && emb[0].resource.uri === 'test://embedded-resource' && !!emb[0].resource.mimeType,
    () => `got ${short(r)}`,
  );

  r = await call('tools/call test_multiple_content_types', 'test_multiple_content_types', {});
  const kinds = r.content.map((x) => x.type);
  ok(
    'tools/call test_multiple_content_types returns text, image and resource',
    ['text', 'image', 'resource'].every((k) => kinds.includes(k)),
    () => `got content types ${kinds}`,
  );

  const progress = [];
  r = await call('tools/call test_tool_with_progress', 'test_tool_with_progress', {}, {
    onprogress: (p) => progress.push(p),
  });
  const values = progress.map((p) => p.progress);
  ok(
    'tools/call test_tool_with_progress: 3 progress notifications, increasing',
    !r.isError &&
      values.length === 3 &&
      values.every((v, i) => i === 0 || values[i - 1] < v) &&
      progress.every((p) => p.total === 100),
    () =>
      `expected progress 0, 50, 100 of total 100; got ${short(progress)} (result ${short(r)})` +
      (rec.sdkErrors.length ? `; SDK errors: ${short(rec.sdkErrors, 1000)}` : ''),
  );

  await step('logging/setLevel debug', () => client.setLoggingLevel('debug', opts));
  ok('logging/setLevel debug', true);
  rec.logs.length = 0;
  r = await call('tools/call test_tool_with_logging', 'test_tool_with_logging', {});
  // The notifications precede the response on the wire; give stragglers a moment anyway.
  for (let waited = 0; rec.logs.length < 3 && waited < 1000; waited += 50) await sleep(50);
  ok(
    'tools/call test_tool_with_logging: >= 3 notifications/message at level info',
    !r.isError && rec.logs.length >= 3 && rec.logs.filter((m) => m.level === 'info').length >= 3,
    () => `got ${rec.logs.length} log messages ${short(rec.logs)} (result ${short(r)})`,
  );

  r = await call('tools/call test_error_handling', 'test_error_handling', {});
  ok(
    'tools/call test_error_handling returns isError: true',
    r.isError === true && texts(r.content).length > 0,
    () => `expected a result with isError true and a text item, got ${short(r)}`,
  );

  r = await call('tools/call test_sampling', 'test_sampling', { prompt: 'What is 2+2?' });
  const gotPrompt = [].concat(rec.sampling[0]?.messages?.[0]?.content ?? [])[0]?.text;
  ok(
    'tools/call test_sampling: sampling/createMessage round trip',
    rec.sampling.length === 1 &&
      gotPrompt === 'What is 2+2?' &&
      !r.isError &&
      texts(r.content).some((t) => t.includes(SAMPLING_REPLY)),
    () => `sampling requests ${short(rec.sampling)}; result ${short(r)}`,
  );

  r = await call('tools/call test_elicitation', 'test_elicitation', { message: 'Who are you?' });
  const joined = texts(r.content).join(' ');
  ok(
    'tools/call test_elicitation: elicitation/create round trip',
    rec.elicitation.length === 1 &&
      rec.elicitation[0].message === 'Who are you?' &&
      !r.isError &&
      joined.includes('accept') &&
      joined.includes('testuser'),
    () => `elicitation requests ${short(rec.elicitation)}; result ${short(r)}`,
  );

  const echoText = 'interop ✓ "quoted" \\ back\nslash, newline and emoji 🦀';
  r = await call('tools/call echo', 'echo', { text: echoText });
  ok(
    'tools/call echo returns its argument',
    !r.isError && short(texts(r.content)) === short([echoText]),
    () => `expected one text item ${short(echoText)}, got ${short(r)}`,
  );

  // --- resources -----------------------------------------------------------------------
  const { resources } = await step('resources/list', () => client.listResources(undefined, opts));
  const uris = resources.map((x) => x.uri);
  const missingRes = EXPECTED_RESOURCES.filter((u) => !uris.includes(u));
  ok('resources/list has the reference resources', missingRes.length === 0, () => `missing ${missingRes}; got ${uris}`);

  const { resourceTemplates } = await step('resources/templates/list', () =>
    client.listResourceTemplates(undefined, opts),
  );
  const tmpl = resourceTemplates.map((t) => t.uriTemplate);
  ok('resources/templates/list has test://template/{id}/data', tmpl.includes(EXPECTED_TEMPLATE), () => `got ${tmpl}`);

  let rr = await step('resources/read test://static-text', () =>
    client.readResource({ uri: 'test://static-text' }, opts),
  );
  ok(
    'resources/read test://static-text returns the exact text',
    rr.contents.length === 1 && contentsText(rr.contents) === STATIC_TEXT && rr.contents[0].mimeType === 'text/plain',
    () => `expected text ${short(STATIC_TEXT)} (text/plain), got ${short(rr)}`,
  );

  rr = await step('resources/read test://static-binary', () =>
    client.readResource({ uri: 'test://static-binary' }, opts),
  );
  ok(
    'resources/read test://static-binary returns a PNG blob',
    rr.contents.length > 0 && isPng(rr.contents[0].blob),
    () => `got ${short(rr)}`,
  );

  rr = await step('resources/read test://template/42/data', () =>
    client.readResource({ uri: 'test://template/42/data' }, opts),
  );
  ok(
    'resources/read test://template/42/data contains 42',
    rr.contents.length > 0 && rr.contents[0].uri === 'test://template/42/data' && contentsText(rr.contents).includes('42'),
    () => `got ${short(rr)}`,
  );

  await step('resources/subscribe + unsubscribe test://watched-resource', async () => {
    await client.subscribeResource({ uri: 'test://watched-resource' }, opts);
    await client.unsubscribeResource({ uri: 'test://watched-resource' }, opts);
  });
  ok('resources/subscribe + unsubscribe test://watched-resource', true);

  // --- prompts -------------------------------------------------------------------------
  const { prompts } = await step('prompts/list', () => client.listPrompts(undefined, opts));
  const pnames = prompts.map((p) => p.name);
  const missingPrompts = EXPECTED_PROMPTS.filter((n) => !pnames.includes(n));
  ok('prompts/list has the reference prompts', missingPrompts.length === 0, () => `missing ${missingPrompts}; got ${pnames}`);
  const argNames = (prompts.find((p) => p.name === 'test_prompt_with_arguments')?.arguments ?? [])
    .map((a) => a.name)
    .sort();
  ok(
    'prompts/list: test_prompt_with_arguments takes arg1 and arg2',
    short(argNames) === short(['arg1', 'arg2']),
    () => `got arguments ${short(argNames)}`,
  );

  let g = await step('prompts/get test_simple_prompt', () => client.getPrompt({ name: 'test_simple_prompt' }, opts));
  ok(
    'prompts/get test_simple_prompt',
    g.messages.length >= 1 && g.messages[0].role === 'user' && g.messages[0].content.type === 'text',
    () => `got ${short(g)}`,
  );

  g = await step('prompts/get test_prompt_with_arguments', () =>
    client.getPrompt(
      { name: 'test_prompt_with_arguments', arguments: { arg1: 'interopValue1', arg2: 'interopValue2' } },
      opts,
    ),
  );
  const ptext = g.messages
    .filter((m) => m.content.type === 'text')
    .map((m) => m.content.text)
    .join(' ');
  ok(
    'prompts/get test_prompt_with_arguments contains arg1 and arg2',
    ptext.includes('interopValue1') && ptext.includes('interopValue2'),
    () => `expected both 'interopValue1' and 'interopValue2' in the message text, got ${short(g)}`,
  );

  g = await step('prompts/get test_prompt_with_embedded_resource', () =>
    client.getPrompt(
      { name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } },
      opts,
    ),
  );
  const pemb = g.messages.filter((m) => m.content.type === 'resource').map((m) => m.content);
  ok(
    'prompts/get test_prompt_with_embedded_resource embeds the resource',
    pemb.length > 0 && pemb[0].resource.uri === 'test://example-resource',
    () => `got ${short(g)}`,
  );

  g = await step('prompts/get test_prompt_with_image', () => client.getPrompt({ name: 'test_prompt_with_image' }, opts));
  ok(
    'prompts/get test_prompt_with_image has an image',
    g.messages.some((m) => m.content.type === 'image' && m.content.mimeType === 'image/png'),
    () => `got ${short(g)}`,
  );

  const comp = await step('completion/complete', () =>
    client.complete(
      { ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'test' } },
      opts,
    ),
  );
  ok('completion/complete returns a values array', Array.isArray(comp.completion?.values), () => `got ${short(comp)}`);
}

function killIfAlive(pid) {
  if (!pid) return;
  try {
    process.kill(pid, 0); // throws if it is gone
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// A second client that answers elicitations as tasks (2025-11-25 `tasks.requests`, the SDK's
// task store): the server's `test_client_task_elicitation` must ask with `params.task`, poll
// the task the handler makes, and read its result (stored a moment after the answer).
async function taskRequestChecks(argv, cleanup) {
  const seen = [];
  const client = new Client(
    { name: 'mcp-interop-ts-task-client', version: '1.0.0' },
    {
      capabilities: { elicitation: { form: {} }, tasks: { requests: { elicitation: { create: {} } } } },
      taskStore: new InMemoryTaskStore(),
    },
  );
  client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
    seen.push(req.params);
    const answer = { action: 'accept', content: { username: 'taskuser', email: 'task@example.com' } };
    if (!req.params.task || !extra.taskStore) return answer;
    const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl });
    setTimeout(() => extra.taskStore.storeTaskResult(task.taskId, 'completed', answer).catch(() => {}), 300);
    return { task };
  });
  const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: { ...process.env }, stderr: 'inherit' });
  cleanup.push(async () => {
    await Promise.race([client.close().catch(() => {}), sleep(5000)]);
    await Promise.race([transport.close().catch(() => {}), sleep(5000)]);
  });
  await step('initialize (a client that takes task requests)', () => client.connect(transport, opts));
  const r = await step('tools/call test_client_task_elicitation', () =>
    client.callTool({ name: 'test_client_task_elicitation', arguments: {} }, undefined, opts),
  );
  const joined = texts(r.content).join(' ');
  ok(
    'tools/call test_client_task_elicitation: asked with a task, polled, its result read',
    seen.length === 1 &&
      typeof seen[0].task?.ttl === 'number' &&
      !r.isError &&
      joined.includes('(as a task)') &&
      joined.includes('taskuser'),
    () => `elicitation requests ${short(seen)}; result ${short(r)}`,
  );
}

function sdkVersion() {
  try {
    const url = new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url);
    return JSON.parse(readFileSync(url, 'utf8')).version;
  } catch {
    return '?';
  }
}

async function main(argv) {
  if (argv.length === 0) {
    console.error('usage: node ts_client.mjs SERVER_COMMAND [ARGS...]');
    return 2;
  }
  console.log(`ts-sdk: @modelcontextprotocol/sdk ${sdkVersion()} against: ${argv.join(' ')}`);
  const rec = { logs: [], sampling: [], elicitation: [], sdkErrors: [] };
  const client = new Client(
    { name: 'mcp-interop-ts-client', version: '1.0.0' },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  // Errors the SDK reports without failing a request (e.g. a progress notification it dropped).
  client.onerror = (e) => {
    rec.sdkErrors.push(String(e?.message ?? e));
  };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    rec.logs.push(n.params);
  });
  client.setRequestHandler(CreateMessageRequestSchema, (req) => {
    rec.sampling.push(req.params);
    return {
      role: 'assistant',
      content: { type: 'text', text: SAMPLING_REPLY },
      model: 'test-model',
      stopReason: 'endTurn',
    };
  });
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    rec.elicitation.push(req.params);
    return { action: 'accept', content: { username: 'testuser', email: 'test@example.com' } };
  });
  const transport = new StdioClientTransport({
    command: argv[0],
    args: argv.slice(1),
    env: { ...process.env },
    stderr: 'inherit',
  });
  // Remember the server's pid, to make sure it is gone when we leave.
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    rec.pid = transport.pid;
  };
  // The Client hands the negotiated version to transports that want it (HTTP ones); catch it.
  transport.setProtocolVersion = (v) => {
    rec.protocolVersion = v;
  };

  let failure = null;
  let timer;
  const cleanups = [];
  const overall = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new CheckFailed('run', `the whole run exceeded ${TOTAL_TIMEOUT_MS / 1000}s (after ${lastPassed})`)),
      TOTAL_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([
      overall,
      (async () => {
        await step('initialize', () => client.connect(transport, opts));
        await runChecks(client, rec);
        await taskRequestChecks(argv, cleanups);
      })(),
    ]);
  } catch (e) {
    failure =
      e instanceof CheckFailed
        ? e
        : new CheckFailed(`the check after '${lastPassed}'`, `${e?.name ?? 'Error'}: ${e?.message ?? e}`);
  } finally {
    clearTimeout(timer);
    for (const cleanup of cleanups) await cleanup();
    // close() ends stdin, then SIGTERM after 2 s, then SIGKILL after 2 s more.
    await Promise.race([client.close().catch(() => {}), sleep(5000)]);
    await Promise.race([transport.close().catch(() => {}), sleep(5000)]);
    killIfAlive(rec.pid);
  }
  if (failure) {
    console.log(`FAIL ${failure.check}: ${failure.detail}`);
    console.log(`ts-sdk: ${passed} passed, 1 failed`);
    return 1;
  }
  console.log(`ts-sdk: ${passed} passed, 0 failed`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
// Do not wait on anything the SDK or a misbehaving server may leave open.
setTimeout(() => process.exit(), 100).unref();
