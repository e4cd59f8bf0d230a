#!/usr/bin/env node
// Interop check: the official TypeScript MCP SDK 2.x (`@modelcontextprotocol/client`, revision
// 2026-07-28) as a client of our server, in the modern (stateless) era.
//
//   node tests/interop/ts_modern_client.mjs http://127.0.0.1:PORT/mcp   # Streamable HTTP
//   node tests/interop/ts_modern_client.mjs target/release/mcp serve    # stdio
//
// Connects a `Client` with `versionNegotiation: { mode: 'auto' }` (it probes `server/discover`,
// falling back to `initialize` only for a legacy server), asserts that the era negotiated is
// 2026-07-28, then checks the reference server: lists, tools (text, structured output, tool
// errors, `x-mcp-header`), progress, per-request log levels, `input_required` rounds answered by
// the SDK from the handlers registered with setRequestHandler (tools and a prompt), resources,
// prompts, completion, `subscriptions/listen` and the modern errors (-32602, -32021). The same
// checks as python_modern_client.py. Prints one `PASS ...` line per check; on the first failed
// check prints `FAIL <check>: <expected vs got>` and exits 1. Checks listed in KNOWN_FAILS are
// skipped with a `KNOWN-FAIL:` line. Every request has a timeout, and so has the whole run. The
// last line is `ts-modern: N passed, N failed`.

import { readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport, LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const MODERN = '2026-07-28';
const TOTAL_TIMEOUT_MS = 90_000; // the whole run, server start-up included
const REQUEST_TIMEOUT_MS = 10_000; // each request

const SIMPLE_TEXT = 'This is a simple text response for testing.';
const STATIC_TEXT = 'This is the content of the static text resource.';
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ROOT_URI = 'file:///tmp/interop-root';

// What the "user" answers, by form field name.
const ANSWERS = {
  name: 'Interop TS',
  color: 'teal',
  ok: true,
  context: 'interop-context',
  username: 'testuser',
  email: 'test@example.com',
};

const EXPECTED_TOOLS = [
  'echo',
  'add',
  'test_simple_text',
  'test_image_content',
  'test_error_handling',
  'test_tool_with_progress',
  'test_logging_tool',
  'test_header_echo',
  'test_input_required_result_elicitation',
  'test_input_required_result_sampling',
  'test_input_required_result_list_roots',
  'test_input_required_result_request_state',
  'test_input_required_result_multiple_inputs',
  'test_input_required_result_multi_round',
  'test_missing_capability',
  'test_trigger_tool_change',
  'test_trigger_prompt_change',
  'json_schema_2020_12_tool',
];
const EXPECTED_RESOURCES = ['test://static-text', 'test://static-binary', 'test://watched-resource'];
const EXPECTED_TEMPLATE = 'test://template/{id}/data';
const EXPECTED_PROMPTS = [
  'test_simple_prompt',
  'test_prompt_with_arguments',
  'test_prompt_with_embedded_resource',
  'test_prompt_with_image',
  'test_input_required_result_prompt',
];

// Checks skipped with a printed `KNOWN-FAIL:` line: {check name: why}. Only for a bug of ours
// that is reported and waiting for a fix in the library.
const KNOWN_FAILS = {};

class CheckFailed extends Error {
  constructor(check, detail) {
    super(`${check}: ${detail}`);
    this.check = check;
    this.detail = detail;
  }
}

let passed = 0;
let known = 0;
let lastPassed = '(none)';

function ok(check, cond, detail = 'assertion failed') {
  if (Object.hasOwn(KNOWN_FAILS, check)) {
    // Not asserted: reported, waiting for a fix in the library.
    known += 1;
    console.log(`KNOWN-FAIL: ${check} (${KNOWN_FAILS[check]})`);
    return;
  }
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

// The JSON-RPC error a request ends with, or its result when it does not fail.
async function outcome(fn) {
  try {
    return { result: await fn() };
  } catch (e) {
    return { error: e };
  }
}

function short(value, limit = 500) {
  const text = JSON.stringify(value);
  return text === undefined || text.length <= limit ? String(text) : `${text.slice(0, limit)}...`;
}

const texts = (content) => (content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
const joined = (r) => texts(r?.content).join(' ');
const isPng = (b64) => typeof b64 === 'string' && Buffer.from(b64, 'base64').subarray(0, 8).equals(PNG_MAGIC);
const opts = { timeout: REQUEST_TIMEOUT_MS };
const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const sampledQuestion = (params) => [].concat(params?.messages?.[0]?.content ?? [])[0]?.text ?? '';
const describeError = (e) => (e ? `error ${e.code} ${e.message} ${short(e.data)}` : 'no error');

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(cond, ms) {
  for (let waited = 0; !cond() && waited < ms; waited += 50) await sleep(50);
  return cond();
}

function makeRecorder() {
  const rec = { logs: [], elicitation: [], sampling: [], roots: 0, toolsChanged: 0, promptsChanged: 0 };
  rec.clear = () => {
    rec.logs.length = 0;
    rec.elicitation.length = 0;
    rec.sampling.length = 0;
    rec.roots = 0;
  };
  return rec;
}

function newClient(rec, { answering = true } = {}) {
  const client = new Client(
    { name: 'mcp-interop-ts-modern', version: '1.0.0' },
    {
      capabilities: answering ? { elicitation: {}, sampling: {}, roots: {} } : {},
      versionNegotiation: { mode: 'auto' },
    },
  );
  client.onerror = (e) => rec.sdkErrors?.push(String(e?.message ?? e));
  if (!answering) return client;
  client.setNotificationHandler('notifications/message', (n) => {
    rec.logs.push(n.params);
  });
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    rec.toolsChanged += 1;
  });
  client.setNotificationHandler('notifications/prompts/list_changed', () => {
    rec.promptsChanged += 1;
  });
  client.setRequestHandler('elicitation/create', (req) => {
    rec.elicitation.push(req.params);
    const fields = Object.keys(req.params?.requestedSchema?.properties ?? {});
    const content = Object.fromEntries(fields.filter((k) => k in ANSWERS).map((k) => [k, ANSWERS[k]]));
    return { action: 'accept', content };
  });
  client.setRequestHandler('sampling/createMessage', (req) => {
    rec.sampling.push(req.params);
    const question = sampledQuestion(req.params);
    const text = question.includes('capital of France') ? 'Paris' : `Model reply to: ${question}`;
    return { role: 'assistant', content: { type: 'text', text }, model: 'interop-model' };
  });
  client.setRequestHandler('roots/list', () => {
    rec.roots += 1;
    return { roots: [{ uri: ROOT_URI, name: 'interop' }] };
  });
  return client;
}

async function runChecks(client, rec, connectBare) {
  // --- era -----------------------------------------------------------------------------------
  const version = client.getNegotiatedProtocolVersion();
  const info = client.getServerVersion();
  ok(
    `connect: negotiated ${version} (server ${info?.name})`,
    version === MODERN,
    () => `expected protocol version ${MODERN}, got ${version}`,
  );
  const discover = client.getDiscoverResult();
  ok(
    'connect: era modern through server/discover',
    client.getProtocolEra() === 'modern' && discover?.supportedVersions?.includes(MODERN),
    () => `era ${client.getProtocolEra()}, discover result ${short(discover)}`,
  );
  ok(
    'server/discover: serverInfo and instructions',
    info?.name === 'mcp-reference-server' && !!client.getInstructions(),
    () => `serverInfo ${short(info)}, instructions ${short(client.getInstructions())}`,
  );
  const caps = client.getServerCapabilities() ?? {};
  ok(
    'server/discover: capabilities tools, resources, prompts, completions',
    caps.tools && caps.resources && caps.prompts && caps.completions,
    () => `got capabilities ${short(caps)}`,
  );

  // --- tools ---------------------------------------------------------------------------------
  const { tools } = await step('tools/list', () => client.listTools(undefined, opts));
  const names = tools.map((t) => t.name);
  const missingTools = EXPECTED_TOOLS.filter((n) => !names.includes(n));
  ok(
    `tools/list (${tools.length} tools) has the reference tools`,
    missingTools.length === 0 && new Set(names).size === names.length,
    () => `missing ${missingTools}; got ${names}`,
  );
  const add = tools.find((t) => t.name === 'add');
  ok(
    'tools/list: add has an outputSchema, a title and annotations',
    add.outputSchema?.properties?.sum !== undefined && add.title === 'Add numbers' && add.annotations?.readOnlyHint === true,
    () => `got ${short(add)}`,
  );
  const schema = tools.find((t) => t.name === 'json_schema_2020_12_tool').inputSchema;
  ok(
    'tools/list: json_schema_2020_12_tool inputSchema kept verbatim',
    schema.$schema === 'https://json-schema.org/draft/2020-12/schema' &&
      schema.$defs?.address !== undefined &&
      schema.additionalProperties === false,
    () => `got ${short(schema)}`,
  );

  const call = (check, name, args = {}, extra = {}, meta = undefined) =>
    step(check, () =>
      client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, { ...opts, ...extra }),
    );

  const echoText = 'interop ✓ "quoted" \\ back\nslash, newline and emoji 🦀';
  let r = await call('tools/call echo', 'echo', { text: echoText });
  ok(
    'tools/call echo returns its argument',
    !r.isError && sameJson(texts(r.content), [echoText]),
    () => `expected one text item ${short(echoText)}, got ${short(r)}`,
  );

  r = await call('tools/call add (structured output)', 'add', { a: 1.25, b: 2 });
  ok(
    'tools/call add: structuredContent {sum: 3.25} and its JSON as text',
    !r.isError && sameJson(r.structuredContent, { sum: 3.25 }) && texts(r.content).some((t) => JSON.parse(t).sum === 3.25),
    () => `got ${short(r)}`,
  );

  r = await call('tools/call test_simple_text', 'test_simple_text');
  ok('tools/call test_simple_text', sameJson(texts(r.content), [SIMPLE_TEXT]), () => `got ${short(r)}`);

  r = await call('tools/call test_image_content', 'test_image_content');
  const img = r.content.filter((x) => x.type === 'image');
  ok(
    'tools/call test_image_content returns a PNG image',
    img.length > 0 && img[0].mimeType === 'image/png' && isPng(img[0].data),
    () => `got ${short(r)}`,
  );

  r = await call('tools/call test_error_handling', 'test_error_handling');
  ok(
    'tools/call test_error_handling returns isError: true',
    r.isError === true && joined(r).includes('intentionally'),
    () => `expected isError true with the tool's message, got ${short(r)}`,
  );

  let o = await outcome(() => client.callTool({ name: 'no_such_tool', arguments: {} }, opts));
  ok(
    'tools/call an unknown tool: JSON-RPC error -32602',
    o.error?.code === -32602,
    () => `got ${o.error ? describeError(o.error) : short(o.result)}`,
  );

  r = await call('tools/call test_header_echo (x-mcp-header)', 'test_header_echo', { region: 'eu-west-1', note: 'n' });
  ok(
    'tools/call test_header_echo (Mcp-Param-Region mirrored) returns region=eu-west-1',
    !r.isError && sameJson(texts(r.content), ['region=eu-west-1']),
    () => `got ${short(r)}`,
  );

  const progress = [];
  r = await call('tools/call test_tool_with_progress', 'test_tool_with_progress', {}, { onprogress: (p) => progress.push(p) });
  ok(
    'tools/call test_tool_with_progress: progress 0, 50, 100 of 100',
    !r.isError && sameJson(progress.map((p) => p.progress), [0, 50, 100]) && progress.every((p) => p.total === 100),
    () => `got progress ${short(progress)} (result ${short(r)})`,
  );

  rec.clear();
  r = await call('tools/call test_tool_with_logging without a log level', 'test_tool_with_logging');
  await sleep(300);
  ok(
    'tools/call test_tool_with_logging without _meta logLevel: no log messages',
    !r.isError && rec.logs.length === 0,
    () => `got ${short(rec.logs)} (result ${short(r)})`,
  );
  r = await call('tools/call test_tool_with_logging at logLevel info', 'test_tool_with_logging', {}, {}, {
    [LOG_LEVEL_META_KEY]: 'info',
  });
  await waitFor(() => rec.logs.length >= 3, 1000);
  ok(
    'tools/call test_tool_with_logging with _meta logLevel info: 3 notifications/message',
    !r.isError &&
      sameJson(
        rec.logs.map((m) => m.data),
        ['Tool execution started', 'Tool processing data', 'Tool execution completed'],
      ) &&
      rec.logs.every((m) => m.level === 'info'),
    () => `got ${short(rec.logs)} (result ${short(r)})`,
  );
  rec.clear();
  r = await call('tools/call test_logging_tool at logLevel error', 'test_logging_tool', {}, {}, {
    [LOG_LEVEL_META_KEY]: 'error',
  });
  await sleep(300);
  ok(
    'tools/call test_logging_tool at logLevel error: info messages filtered out',
    !r.isError && joined(r).includes('completed') && rec.logs.length === 0,
    () => `got ${short(rec.logs)} (result ${short(r)})`,
  );

  // --- input_required rounds -----------------------------------------------------------------
  rec.clear();
  r = await call('input_required: elicitation', 'test_input_required_result_elicitation');
  ok(
    'input_required: elicitation answered from the handler',
    sameJson(rec.elicitation.map((e) => e.message), ['What is your name?']) &&
      !r.isError &&
      joined(r).includes('action=accept') &&
      joined(r).includes('"Interop TS"'),
    () => `elicitations ${short(rec.elicitation)}; result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: sampling', 'test_input_required_result_sampling');
  ok(
    'input_required: sampling answered from the handler',
    rec.sampling.length === 1 &&
      sampledQuestion(rec.sampling[0]).includes('capital of France') &&
      rec.sampling[0].maxTokens === 100 &&
      sameJson(texts(r.content), ['The model answered: Paris']),
    () => `sampling ${short(rec.sampling)}; result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: roots', 'test_input_required_result_list_roots');
  ok(
    'input_required: roots/list answered from the handler',
    rec.roots === 1 && sameJson(texts(r.content), [`The client has 1 root(s): ${ROOT_URI}`]),
    () => `roots asked ${rec.roots} time(s); result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: sealed requestState', 'test_input_required_result_request_state');
  ok(
    'input_required: requestState carried across the round',
    rec.elicitation.length === 1 && joined(r).startsWith('state-ok: confirmation action=accept'),
    () => `elicitations ${rec.elicitation.length}; result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: three inputs in one round', 'test_input_required_result_multiple_inputs');
  ok(
    'input_required: elicitation + sampling + roots in one round',
    rec.elicitation.length === 1 &&
      rec.sampling.length === 1 &&
      rec.roots === 1 &&
      joined(r).includes('["client_roots", "greeting", "user_name"]'),
    () => `asked ${rec.elicitation.length}/${rec.sampling.length}/${rec.roots}; result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: two rounds', 'test_input_required_result_multi_round');
  ok(
    'input_required: two rounds, one question each',
    sameJson(rec.elicitation.map((e) => e.message), ['What is your name?', 'What is your favourite colour?']) &&
      joined(r).includes('"Interop TS"') &&
      joined(r).includes('"teal"'),
    () => `elicitations ${short(rec.elicitation.map((e) => e.message))}; result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: test_elicitation (the legacy-era tool)', 'test_elicitation', { message: 'Who are you?' });
  ok(
    'input_required: test_elicitation (ctx.elicit) as an input_required round',
    sameJson(rec.elicitation.map((e) => e.message), ['Who are you?']) &&
      joined(r).includes('action=accept') &&
      joined(r).includes('testuser'),
    () => `elicitations ${short(rec.elicitation)}; result ${short(r)}`,
  );

  rec.clear();
  r = await call('input_required: test_sampling', 'test_sampling', { prompt: 'What is 2+2?' });
  ok(
    'input_required: test_sampling (ctx.sample) as an input_required round',
    rec.sampling.length === 1 &&
      sampledQuestion(rec.sampling[0]) === 'What is 2+2?' &&
      sameJson(texts(r.content), ['LLM response: Model reply to: What is 2+2?']),
    () => `sampling ${short(rec.sampling)}; result ${short(r)}`,
  );

  rec.clear();
  let g = await step('input_required: prompts/get', () =>
    client.getPrompt({ name: 'test_input_required_result_prompt' }, opts),
  );
  ok(
    'input_required: prompts/get test_input_required_result_prompt',
    sameJson(rec.elicitation.map((e) => e.message), ['What context should the prompt use?']) &&
      sameJson(texts(g.messages.map((m) => m.content)), ['Use this context: interop-context']),
    () => `elicitations ${short(rec.elicitation.map((e) => e.message))}; prompt ${short(g)}`,
  );

  const bare = await step('missing client capability: connect', () => connectBare());
  try {
    o = await outcome(() => bare.callTool({ name: 'test_missing_capability', arguments: {} }, opts));
  } finally {
    await Promise.race([bare.close().catch(() => {}), sleep(5000)]);
  }
  ok(
    'tools/call needing sampling from a client without it: -32021',
    o.error?.code === -32021 && o.error?.data?.requiredCapabilities?.sampling !== undefined,
    () => `got ${o.error ? describeError(o.error) : short(o.result)}`,
  );

  // --- resources -----------------------------------------------------------------------------
  const { resources } = await step('resources/list', () => client.listResources(undefined, opts));
  const uris = resources.map((x) => x.uri);
  const missingRes = EXPECTED_RESOURCES.filter((u) => !uris.includes(u));
  ok('resources/list has the reference resources', missingRes.length === 0, () => `missing ${missingRes}; got ${uris}`);

  const { resourceTemplates } = await step('resources/templates/list', () =>
    client.listResourceTemplates(undefined, opts),
  );
  const tmpl = resourceTemplates.map((t) => t.uriTemplate);
  ok('resources/templates/list has test://template/{id}/data', tmpl.includes(EXPECTED_TEMPLATE), () => `got ${tmpl}`);

  let rr = await step('resources/read test://static-text', () => client.readResource({ uri: 'test://static-text' }, opts));
  ok(
    'resources/read test://static-text returns the exact text',
    rr.contents.length === 1 && rr.contents[0].text === STATIC_TEXT && rr.contents[0].mimeType === 'text/plain',
    () => `got ${short(rr)}`,
  );

  rr = await step('resources/read test://static-binary', () => client.readResource({ uri: 'test://static-binary' }, opts));
  ok('resources/read test://static-binary returns a PNG blob', isPng(rr.contents[0]?.blob), () => `got ${short(rr)}`);

  rr = await step('resources/read test://template/42/data', () =>
    client.readResource({ uri: 'test://template/42/data' }, opts),
  );
  let data;
  try {
    data = JSON.parse(rr.contents[0]?.text ?? 'null');
  } catch {
    data = null;
  }
  ok(
    'resources/read test://template/42/data (template expanded)',
    rr.contents[0]?.uri === 'test://template/42/data' && data?.id === '42',
    () => `got ${short(rr)}`,
  );

  o = await outcome(() => client.readResource({ uri: 'test://no-such-resource' }, opts));
  ok(
    'resources/read an unknown resource: -32602 (not -32002 in 2026-07-28)',
    o.error?.code === -32602,
    () => `got ${o.error ? describeError(o.error) : short(o.result)}`,
  );

  // --- prompts -------------------------------------------------------------------------------
  const { prompts } = await step('prompts/list', () => client.listPrompts(undefined, opts));
  const pnames = prompts.map((p) => p.name);
  const missingPrompts = EXPECTED_PROMPTS.filter((n) => !pnames.includes(n));
  ok('prompts/list has the reference prompts', missingPrompts.length === 0, () => `missing ${missingPrompts}; got ${pnames}`);
  const argNames = (prompts.find((p) => p.name === 'test_prompt_with_arguments')?.arguments ?? []).map((a) => a.name).sort();
  ok(
    'prompts/list: test_prompt_with_arguments takes arg1 and arg2',
    sameJson(argNames, ['arg1', 'arg2']),
    () => `got ${short(argNames)}`,
  );

  g = await step('prompts/get test_simple_prompt', () => client.getPrompt({ name: 'test_simple_prompt' }, opts));
  ok(
    'prompts/get test_simple_prompt',
    g.messages.length === 1 && g.messages[0].role === 'user' && g.messages[0].content.text?.startsWith('This is a simple'),
    () => `got ${short(g)}`,
  );

  g = await step('prompts/get test_prompt_with_arguments', () =>
    client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'interopValue1', arg2: 'interopValue2' } }, opts),
  );
  const ptext = texts(g.messages.map((m) => m.content)).join(' ');
  ok(
    'prompts/get test_prompt_with_arguments contains arg1 and arg2',
    ptext.includes('interopValue1') && ptext.includes('interopValue2'),
    () => `got ${short(g)}`,
  );

  g = await step('prompts/get test_prompt_with_embedded_resource', () =>
    client.getPrompt({ name: 'test_prompt_with_embedded_resource', arguments: { resourceUri: 'test://example-resource' } }, opts),
  );
  const pemb = g.messages.filter((m) => m.content.type === 'resource').map((m) => m.content);
  ok(
    'prompts/get test_prompt_with_embedded_resource embeds the resource',
    pemb.length > 0 && pemb[0].resource.uri === 'test://example-resource',
    () => `got ${short(g)}`,
  );

  g = await step('prompts/get test_prompt_with_image', () => client.getPrompt({ name: 'test_prompt_with_image' }, opts));
  ok(
    'prompts/get test_prompt_with_image has a PNG image',
    g.messages.some((m) => m.content.type === 'image' && m.content.mimeType === 'image/png'),
    () => `got ${short(g)}`,
  );

  let comp = await step('completion/complete', () =>
    client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'te' } }, opts),
  );
  ok("completion/complete arg1 'te' -> test1, test2", sameJson(comp.completion?.values, ['test1', 'test2']), () => `got ${short(comp)}`);
  comp = await step('completion/complete (template)', () =>
    client.complete({ ref: { type: 'ref/resource', uri: EXPECTED_TEMPLATE }, argument: { name: 'id', value: '1' } }, opts),
  );
  ok("completion/complete template id '1' -> 1, 123", sameJson(comp.completion?.values, ['1', '123']), () => `got ${short(comp)}`);

  // --- subscriptions/listen ------------------------------------------------------------------
  const sub = await step('subscriptions/listen', () =>
    client.listen(
      { toolsListChanged: true, promptsListChanged: true, resourceSubscriptions: ['test://watched-resource'] },
      opts,
    ),
  );
  try {
    const honored = sub.honoredFilter;
    ok(
      'subscriptions/listen: acknowledged with the filter honored',
      honored.toolsListChanged === true &&
        honored.promptsListChanged === true &&
        sameJson(honored.resourceSubscriptions, ['test://watched-resource']),
      () => `honored ${short(honored)}`,
    );
    rec.toolsChanged = 0;
    r = await call('test_trigger_tool_change', 'test_trigger_tool_change');
    await waitFor(() => rec.toolsChanged > 0, 5000);
    ok(
      'subscriptions/listen: tools list_changed after a tool was added',
      joined(r) === 'dynamic_tool added' && rec.toolsChanged === 1,
      () => `trigger said ${short(joined(r))}; ${rec.toolsChanged} tools list_changed notification(s)`,
    );
    let after = (await step('tools/list after the change', () => client.listTools(undefined, opts))).tools.map((t) => t.name);
    ok('tools/list after the change has dynamic_tool', after.includes('dynamic_tool'), () => `got ${after}`);
    rec.promptsChanged = 0;
    r = await call('test_trigger_prompt_change', 'test_trigger_prompt_change');
    await waitFor(() => rec.promptsChanged > 0, 5000);
    ok(
      'subscriptions/listen: prompts list_changed after a prompt was added',
      joined(r) === 'dynamic_prompt added' && rec.promptsChanged === 1,
      () => `trigger said ${short(joined(r))}; ${rec.promptsChanged} prompts list_changed notification(s)`,
    );
    // Put the server back as it was.
    await call('test_trigger_tool_change (again)', 'test_trigger_tool_change');
    await call('test_trigger_prompt_change (again)', 'test_trigger_prompt_change');
    await waitFor(() => rec.toolsChanged > 1, 5000);
    after = (await step('tools/list after the second change', () => client.listTools(undefined, { ...opts, cacheMode: 'refresh' }))).tools.map(
      (t) => t.name,
    );
    ok('tools/list after removing it again lacks dynamic_tool', !after.includes('dynamic_tool'), () => `got ${after}`);
  } finally {
    await Promise.race([sub.close().catch(() => {}), sleep(5000)]);
  }
  const closed = await Promise.race([sub.closed, sleep(5000).then(() => 'still open')]);
  ok('subscriptions/listen: closed by the client', closed === 'local', () => `closed: ${closed}`);
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

function sdkVersion() {
  try {
    const url = new URL('./node_modules/@modelcontextprotocol/client/package.json', import.meta.url);
    return JSON.parse(readFileSync(url, 'utf8')).version;
  } catch {
    return '?';
  }
}

async function main(argv) {
  if (argv.length === 0) {
    console.error('usage: node ts_modern_client.mjs URL | SERVER_COMMAND [ARGS...]');
    return 2;
  }
  const http = /^https?:\/\//.test(argv[0]);
  console.log(
    `ts-modern: @modelcontextprotocol/client ${sdkVersion()} over ${http ? 'Streamable HTTP' : 'stdio'} against: ${argv.join(' ')}`,
  );
  const pids = [];
  const transports = [];
  const makeTransport = () => {
    const transport = http
      ? new StreamableHTTPClientTransport(new URL(argv[0]))
      : new StdioClientTransport({ command: argv[0], args: argv.slice(1), env: { ...process.env }, stderr: 'inherit' });
    if (!http) {
      // Remember the server's pid, to make sure it is gone when we leave.
      const start = transport.start.bind(transport);
      transport.start = async () => {
        await start();
        pids.push(transport.pid);
      };
    }
    transports.push(transport);
    return transport;
  };
  const rec = makeRecorder();
  rec.sdkErrors = [];
  const client = newClient(rec);
  const connectBare = async () => {
    const bare = newClient(makeRecorder(), { answering: false });
    await bare.connect(makeTransport(), opts);
    return bare;
  };

  let failure = null;
  let timer;
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
        await step('connect', () => client.connect(makeTransport(), opts));
        await runChecks(client, rec, connectBare);
      })(),
    ]);
  } catch (e) {
    failure =
      e instanceof CheckFailed
        ? e
        : new CheckFailed(`the check after '${lastPassed}'`, `${e?.name ?? 'Error'}: ${e?.message ?? e}`);
  } finally {
    clearTimeout(timer);
    await Promise.race([client.close().catch(() => {}), sleep(5000)]);
    for (const t of transports) await Promise.race([t.close().catch(() => {}), sleep(5000)]);
    for (const pid of pids) killIfAlive(pid);
  }
  const knownNote = known ? `, ${known} known failures skipped` : '';
  if (failure) {
    console.log(`FAIL ${failure.check}: ${failure.detail}`);
    if (rec.sdkErrors.length) console.log(`  (SDK errors: ${short(rec.sdkErrors, 1000)})`);
    console.log(`ts-modern: ${passed} passed, 1 failed${knownNote}`);
    return 1;
  }
  console.log(`ts-modern: ${passed} passed, 0 failed${knownNote}`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
// Do not wait on anything the SDK or a misbehaving server may leave open.
setTimeout(() => process.exit(), 100).unref();
